//! Who called `stepmon shell`, and with what environment: taken by the
//! caller from its own process, handed to the root `stepmon shell` that
//! sudo starts, and given back to the script there.
//!
//! sudo resets the environment (`env_reset`, and `secure_path` for `PATH`)
//! and closes every fd above 2 in the command it starts (its `closefrom`),
//! so neither can carry it; the command line is readable by every user
//! (`/proc/PID/cmdline`), so it must not. The caller writes it to a memfd
//! of its own and waits for sudo; the root side opens it as
//! `/proc/PID/fd/FD`, which only that user and root may do (a
//! `PTRACE_MODE_READ` check, proc(5)). The memfd's owner is the uid that
//! made it, so the root side checks that the ids it names are its maker's.
//! Once it has read them it empties the memfd, before it runs the script:
//! a memfd still full when sudo has ended says that the script did not run
//! (sudo refused), and the caller runs it itself.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{Read as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::unix::fs::MetadataExt as _;

/// The first field: what wrote the rest, and in which layout.
const MAGIC: &[u8] = b"stepmon-shell-caller-1";

/// The caller's ids, umask and whole environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Its effective user and group ids (the ones its files and its
    /// script's are checked against).
    pub uid: u32,
    pub gid: u32,
    /// Its supplementary groups.
    pub groups: Vec<u32>,
    /// Its file mode creation mask.
    pub umask: u32,
    /// Its environment, every variable as its bytes.
    pub env: Vec<(OsString, OsString)>,
}

impl Caller {
    /// This process's.
    pub fn of_this_process() -> std::io::Result<Caller> {
        use rustix::fs::Mode;
        // umask(2) cannot only read: set and set back, before any thread
        // of this process creates a file.
        let umask = rustix::process::umask(Mode::empty());
        rustix::process::umask(umask);
        Ok(Caller {
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
            groups: rustix::process::getgroups()?.into_iter().map(rustix::process::Gid::as_raw).collect(),
            umask: umask.bits(),
            env: std::env::vars_os().collect(),
        })
    }

    /// The bytes of [`Caller::decode`]: fields each ended by a NUL (which
    /// no variable and no number holds): the magic, the uid, the gid, the
    /// umask in octal, the groups separated by spaces, then `NAME=VALUE`
    /// for each variable.
    pub fn encode(&self) -> Vec<u8> {
        let groups: Vec<String> = self.groups.iter().map(u32::to_string).collect();
        let head = [
            MAGIC.to_vec(),
            self.uid.to_string().into_bytes(),
            self.gid.to_string().into_bytes(),
            format!("{:o}", self.umask).into_bytes(),
            groups.join(" ").into_bytes(),
        ];
        let mut bytes = Vec::new();
        for field in head {
            bytes.extend_from_slice(&field);
            bytes.push(0);
        }
        for (name, value) in &self.env {
            bytes.extend_from_slice(name.as_bytes());
            bytes.push(b'=');
            bytes.extend_from_slice(value.as_bytes());
            bytes.push(0);
        }
        bytes
    }

    /// [`Caller::encode`]'s bytes back.
    pub fn decode(bytes: &[u8]) -> Result<Caller, Malformed> {
        let body = bytes.strip_suffix(&[0]).ok_or(Malformed("it does not end with a NUL"))?;
        let mut fields = body.split(|&b| b == 0);
        if fields.next() != Some(MAGIC) {
            return Err(Malformed("it was not written by this version of stepmon shell"));
        }
        let mut next = |what| fields.next().and_then(|f| std::str::from_utf8(f).ok()).ok_or(Malformed(what));
        // An id of -1 means "unchanged" to the set*id calls: none names it.
        let number = |text: &str, radix, what| {
            u32::from_str_radix(text, radix).ok().filter(|&n| n != u32::MAX).ok_or(Malformed(what))
        };
        let uid = number(next("no uid")?, 10, "the uid is not a number")?;
        let gid = number(next("no gid")?, 10, "the gid is not a number")?;
        let umask = number(next("no umask")?, 8, "the umask is not an octal number")?;
        let groups = next("no groups")?
            .split(' ')
            .filter(|g| !g.is_empty())
            .map(|g| number(g, 10, "a group is not a number"))
            .collect::<Result<_, _>>()?;
        let env = fields
            .map(|pair| {
                let at = pair.iter().position(|&b| b == b'=').ok_or(Malformed("a variable has no `=`"))?;
                let (name, value) = (&pair[..at], &pair[at + 1..]);
                Ok((OsString::from_vec(name.to_vec()), OsString::from_vec(value.to_vec())))
            })
            .collect::<Result<_, _>>()?;
        Ok(Caller { uid, gid, groups, umask, env })
    }

    /// The variable `name`, if set and valid UTF-8.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.var_os(name).and_then(OsStr::to_str)
    }

    /// The variable `name`, if set.
    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.env.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_os_str())
    }

    /// A memfd of this process holding [`Caller::encode`]'s bytes, for
    /// the root side to take over.
    pub fn hand_over(&self) -> std::io::Result<HandedOver> {
        let fd = rustix::fs::memfd_create("stepmon-shell-caller", rustix::fs::MemfdFlags::CLOEXEC)?;
        let mut memfd = std::fs::File::from(fd);
        memfd.write_all(&self.encode())?;
        let handle = Handle { pid: std::process::id(), fd: memfd.as_raw_fd().unsigned_abs() };
        Ok(HandedOver { memfd, handle })
    }
}

/// The caller's memfd, held until the root side has ended.
#[derive(Debug)]
pub struct HandedOver {
    memfd: std::fs::File,
    /// Where the root side finds it.
    pub handle: Handle,
}

impl HandedOver {
    /// Whether the root side took the caller over (it empties the memfd
    /// before it runs the script).
    pub fn taken(&self) -> bool {
        self.memfd.metadata().is_ok_and(|m| m.len() == 0)
    }
}

/// Why the caller's bytes could not be read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed(&'static str);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Where the root side finds the caller's memfd: `/proc/PID/fd/FD`, given
/// on its command line as `PID:FD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handle {
    pid: u32,
    fd: u32,
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.pid, self.fd)
    }
}

impl std::str::FromStr for Handle {
    type Err = String;

    fn from_str(text: &str) -> Result<Handle, String> {
        let (pid, fd) = text.split_once(':').ok_or_else(|| format!("{text:?} is not PID:FD"))?;
        let number = |n: &str| n.parse::<u32>().map_err(|_| format!("{text:?} is not PID:FD"));
        Ok(Handle { pid: number(pid)?, fd: number(fd)? })
    }
}

impl Handle {
    /// Reads the caller the memfd holds, checks that the ids it names are
    /// those of the user who made the memfd, and empties it: from then on
    /// the script is this side's to run (see the module's docs).
    pub fn take_over(self) -> Result<Caller, String> {
        let path = format!("/proc/{}/fd/{}", self.pid, self.fd);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {path}: {e}"))?;
        let owner = file.metadata().map_err(|e| format!("cannot stat {path}: {e}"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| format!("cannot read {path}: {e}"))?;
        let caller = Caller::decode(&bytes).map_err(|e| format!("{path} is not what the caller wrote: {e}"))?;
        if (owner.uid(), owner.gid()) != (caller.uid, caller.gid) {
            return Err(format!(
                "{path} was made by uid {} gid {}, not by the uid {} gid {} it names",
                owner.uid(),
                owner.gid(),
                caller.uid,
                caller.gid
            ));
        }
        file.set_len(0).map_err(|e| format!("cannot empty {path}: {e}"))?;
        Ok(caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            uid: 1001,
            gid: 118,
            groups: vec![4, 24, 27, 118],
            umask: 0o002,
            env: vec![
                ("HOME".into(), "/home/runner".into()),
                ("EMPTY".into(), "".into()),
                ("LINES".into(), "a=b\nc d\t\u{e9}".into()),
                ("BYTES".into(), OsString::from_vec(b"\xff\xfe".to_vec())),
            ],
        }
    }

    #[test]
    fn the_caller_reads_back_byte_for_byte() {
        let caller = caller();
        assert_eq!(Caller::decode(&caller.encode()), Ok(caller.clone()));
        let none = Caller { groups: Vec::new(), env: Vec::new(), ..caller };
        assert_eq!(Caller::decode(&none.encode()), Ok(none));
        assert_eq!(self::caller().var("HOME"), Some("/home/runner"));
        assert_eq!(self::caller().var("BYTES"), None);
    }

    #[test]
    fn malformed_bytes_say_why() {
        let good = caller().encode();
        assert_eq!(Caller::decode(&good[..good.len() - 1]), Err(Malformed("it does not end with a NUL")));
        assert!(Caller::decode(b"other\0").unwrap_err().0.contains("not written by"));
        let bad_umask = b"stepmon-shell-caller-1\x001\x002\x009\x00\x00";
        assert_eq!(Caller::decode(bad_umask), Err(Malformed("the umask is not an octal number")));
        let no_equals = b"stepmon-shell-caller-1\x001\x002\x0022\x00\x00NAME\x00";
        assert_eq!(Caller::decode(no_equals), Err(Malformed("a variable has no `=`")));
        assert_eq!(Caller::decode(b"stepmon-shell-caller-1\x001\x00"), Err(Malformed("no gid")));
    }

    #[test]
    fn this_process_and_its_handle() {
        let me = Caller::of_this_process().unwrap();
        assert_eq!(me.uid, rustix::process::geteuid().as_raw());
        assert!(me.env.iter().any(|(name, _)| name == "PATH"));
        let handed = me.hand_over().unwrap();
        let handle = handed.handle;
        assert_eq!(handle.to_string().parse::<Handle>(), Ok(handle));
        assert!(!handed.taken());
        assert_eq!(handle.take_over(), Ok(me));
        assert!(handed.taken());
        // Taken once: empty now.
        assert!(handle.take_over().unwrap_err().contains("does not end with a NUL"));
        drop(handed);
        // Gone (or the number taken by another test's file, which holds no caller).
        assert!(handle.take_over().is_err());
        assert!("12".parse::<Handle>().is_err() && "1:x".parse::<Handle>().is_err());
    }
}
