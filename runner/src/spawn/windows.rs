//! Windows: each step in a job object of its own, and what the job and the
//! step's first process accounted — the crate's only `unsafe` code on
//! Windows (the Win32 calls, through `windows-sys`).
//!
//! Why the first process is created suspended: a process joins a job with
//! `AssignProcessToJobObject`, and whatever it starts before that is
//! outside the job (not accounted, not killed with it). std's `Command`
//! creates it suspended (`CommandExt::creation_flags(CREATE_SUSPENDED)`),
//! keeps its environment, directory, streams and argument quoting, and
//! gives its process handle; this module assigns that to the job and
//! resumes its one thread. std keeps no handle of that thread for us
//! (`ChildExt::main_thread_handle` is unstable), so the thread is found in
//! a Toolhelp32 snapshot of the system's threads by its process ID — a new,
//! suspended process has exactly one. (`NtResumeProcess` would do it in one
//! call but is not public API; `CreateProcessW` directly would mean
//! writing std's command line quoting, environment block and handle
//! inheritance again; `PROC_THREAD_ATTRIBUTE_JOB_LIST` needs std's unstable
//! `raw_attribute`.)
//!
//! Job objects: <https://learn.microsoft.com/en-us/windows/win32/procthread/job-objects>;
//! the accounting classes:
//! <https://learn.microsoft.com/en-us/windows/win32/api/jobapi2/nf-jobapi2-queryinformationjobobject>.
#![allow(unsafe_code)]
// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{CStr, c_char};
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use crate::job_account::{Io, JobCounters, MemoryPeaks, ProcessCounters};

use windows_sys::Win32::Foundation::{FILETIME, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_BASIC_AND_IO_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOBOBJECTINFOCLASS, JobObjectBasicAccountingInformation,
    JobObjectBasicAndIoAccountingInformation, JobObjectExtendedLimitInformation, QueryInformationJobObject,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::{
    GetProcessIoCounters, GetProcessTimes, IO_COUNTERS, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

/// `CommandExt::creation_flags` for a process that does not run until
/// [`resume_first_thread`].
pub(crate) const CREATE_SUSPENDED: u32 = windows_sys::Win32::System::Threading::CREATE_SUSPENDED;

/// The size of `T` as Win32 takes it.
fn size_u32<T>() -> u32 {
    u32::try_from(size_of::<T>()).unwrap_or(u32::MAX)
}

/// A `BOOL` result as an `io::Result`, with the thread's last error.
fn check(ok: i32) -> io::Result<()> {
    if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Bytes of I/O operations.
fn io_bytes(io: IO_COUNTERS) -> Io {
    Io { read: io.ReadTransferCount, write: io.WriteTransferCount, other: io.OtherTransferCount }
}

/// A step's job object; closing it kills every process still in it
/// (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`), so a step dropped or ended never
/// leaves a process behind.
#[derive(Debug)]
pub(crate) struct Job(OwnedHandle);

impl Job {
    /// A new job that kills its processes when its handle is closed.
    pub(crate) fn new() -> io::Result<Job> {
        // SAFETY: no security attributes (the default descriptor, not
        // inheritable) and no name; both pointers may be null.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a handle just returned by CreateJobObjectW, owned by no one else.
        let job = Job(unsafe { OwnedHandle::from_raw_handle(handle) });
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the pointer and size are those of an initialised
        // JOBOBJECT_EXTENDED_LIMIT_INFORMATION, the structure of this class;
        // the call only reads it.
        check(unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_u32::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>(),
            )
        })?;
        Ok(job)
    }

    fn raw(&self) -> HANDLE {
        self.0.as_raw_handle()
    }

    /// Puts `process` (a process handle with `PROCESS_SET_QUOTA` and
    /// `PROCESS_TERMINATE`: std's child handles have all access) in the job.
    pub(crate) fn assign(&self, process: &impl AsRawHandle) -> io::Result<()> {
        // SAFETY: both handles are open for the call (borrowed from their owners).
        check(unsafe { AssignProcessToJobObject(self.raw(), process.as_raw_handle()) })
    }

    /// Ends every process of the job with `exit_code`.
    pub(crate) fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job handle is open for the call.
        check(unsafe { TerminateJobObject(self.raw(), exit_code) })
    }

    /// One structure of `class` about the job.
    fn query<T: Default>(&self, class: JOBOBJECTINFOCLASS) -> io::Result<T> {
        let mut info = T::default();
        // SAFETY: `class` is the class whose structure `T` is (both callers
        // below pair them); the pointer and size are those of a live `T`
        // that the call fills; the returned length may be null.
        check(unsafe {
            QueryInformationJobObject(self.raw(), class, (&raw mut info).cast(), size_u32::<T>(), std::ptr::null_mut())
        })?;
        Ok(info)
    }

    /// CPU times and processes of every process ever in the job
    /// (`JobObjectBasicAccountingInformation`).
    pub(crate) fn counters(&self) -> io::Result<JobCounters> {
        let basic: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = self.query(JobObjectBasicAccountingInformation)?;
        Ok(JobCounters {
            user: u64::try_from(basic.TotalUserTime).unwrap_or(0),
            kernel: u64::try_from(basic.TotalKernelTime).unwrap_or(0),
            total_processes: basic.TotalProcesses,
            active_processes: basic.ActiveProcesses,
        })
    }

    /// I/O bytes of every process ever in the job
    /// (`JobObjectBasicAndIoAccountingInformation`; a class of its own, which
    /// some implementations lack where they have the one above).
    pub(crate) fn io(&self) -> io::Result<Io> {
        let info: JOBOBJECT_BASIC_AND_IO_ACCOUNTING_INFORMATION =
            self.query(JobObjectBasicAndIoAccountingInformation)?;
        Ok(io_bytes(info.IoInfo))
    }

    /// The job's memory peaks.
    pub(crate) fn memory_peaks(&self) -> io::Result<MemoryPeaks> {
        let info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = self.query(JobObjectExtendedLimitInformation)?;
        Ok(MemoryPeaks { job: info.PeakJobMemoryUsed as u64, process: info.PeakProcessMemoryUsed as u64 })
    }
}

/// Resumes the one thread of the suspended process `pid` (see the module's
/// docs for why it is looked up).
pub(crate) fn resume_first_thread(pid: u32) -> io::Result<()> {
    // SAFETY: a valid flag; process ID 0 means every thread of the system.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just returned by CreateToolhelp32Snapshot, owned by no one else.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot) };
    let mut entry = THREADENTRY32 { dwSize: size_u32::<THREADENTRY32>(), ..THREADENTRY32::default() };
    // SAFETY: an open snapshot handle and a THREADENTRY32 whose `dwSize` is
    // its size, as the call requires; it fills the entry.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &raw mut entry) } != 0;
    let mut resumed = 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: plain values: an access mask, not inheritable, a thread ID.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if thread.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a handle just returned by OpenThread, owned by no one else.
            let thread = unsafe { OwnedHandle::from_raw_handle(thread) };
            // SAFETY: an open thread handle with THREAD_SUSPEND_RESUME.
            if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        entry.dwSize = size_u32::<THREADENTRY32>();
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &raw mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("no thread of process {pid} in a snapshot")));
    }
    Ok(())
}

/// `process`'s own counters (it may have exited: a handle keeps them).
pub(crate) fn process_counters(process: &impl AsRawHandle) -> io::Result<ProcessCounters> {
    let handle = process.as_raw_handle();
    let mut times = [FILETIME::default(); 4];
    let [creation, exit, kernel, user] = &mut times;
    // SAFETY: an open process handle and four writable FILETIMEs.
    check(unsafe { GetProcessTimes(handle, creation, exit, kernel, user) })?;
    let units = |t: &FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    let mut io = IO_COUNTERS::default();
    // SAFETY: an open process handle and a writable IO_COUNTERS.
    check(unsafe { GetProcessIoCounters(handle, &raw mut io) })?;
    let mut memory = PROCESS_MEMORY_COUNTERS { cb: size_u32::<PROCESS_MEMORY_COUNTERS>(), ..Default::default() };
    // SAFETY: an open process handle and a PROCESS_MEMORY_COUNTERS whose `cb` is its size.
    check(unsafe { K32GetProcessMemoryInfo(handle, &raw mut memory, memory.cb) })?;
    Ok(ProcessCounters {
        user: units(&times[3]),
        kernel: units(&times[2]),
        io: io_bytes(io),
        peak_commit: memory.PeakPagefileUsage as u64,
    })
}

/// The Wine version this process runs under, if it does (Wine's ntdll
/// exports `wine_get_version`; Windows' does not).
pub(crate) fn wine_version() -> Option<String> {
    let ntdll: Vec<u16> = "ntdll.dll\0".encode_utf16().collect();
    // SAFETY: a NUL-terminated UTF-16 name; ntdll is loaded in every
    // process, and the module handle is not owned (no FreeLibrary).
    let module = unsafe { GetModuleHandleW(ntdll.as_ptr()) };
    if module.is_null() {
        return None;
    }
    // SAFETY: a loaded module and a NUL-terminated name.
    let function = unsafe { GetProcAddress(module, c"wine_get_version".as_ptr().cast()) }?;
    // SAFETY: Wine declares it `const char *wine_get_version(void)`; on
    // x86-64 its calling convention is the one of `extern "system"`.
    let get: unsafe extern "system" fn() -> *const c_char = unsafe { std::mem::transmute(function) };
    // SAFETY: Wine returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(get()) };
    Some(version.to_string_lossy().into_owned())
}
