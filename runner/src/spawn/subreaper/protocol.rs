//! What the step's subreaper and its caller say to each other over the
//! pipe: the event records the subreaper writes and the byte the caller
//! answers with.

/// One event on the pipe: `[kind u32][pid i32][status i32][flags u32]
/// [rusage 9×u64][comm 16 bytes][extra u64]`, native-endian; 112 bytes,
/// below `PIPE_BUF`, so each write is atomic (pipe(7)).
pub(super) const RECORD: usize = 112;
pub(super) const STARTED: u32 = 1;
pub(super) const NOT_STARTED: u32 = 2;
pub(super) const REAPED: u32 = 3;
pub(super) const DONE: u32 = 4;
/// `flags`: the reaped process is the command's first one.
pub(super) const FLAG_MAIN: u32 = 1;
/// `flags`: `comm` holds its command name.
pub(super) const FLAG_COMM: u32 = 2;
/// `flags` of the first process: once it was reaped the subreaper had no
/// child left, so nothing is left to kill or wait for; its [`DONE`] follows
/// without a word from the caller (one round trip less at a step's end).
pub(super) const FLAG_ALONE: u32 = 4;
/// `extra` of [`STARTED`]: how the command's process was created.
pub(super) const WAY_CLONE3: u64 = 1;
pub(super) const WAY_FORK: u64 = 2;
/// What the caller writes once the command's first process has exited.
pub(super) const KILL: u8 = b'k';
pub(super) const WAIT_ALL: u8 = b'w';
/// The most distinct processes whose kill is remembered (to count each
/// once); past it each signal counts.
pub(super) const REMEMBER_KILLED: usize = 1024;
