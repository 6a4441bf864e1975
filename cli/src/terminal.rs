//! The terminal of `stepmon top`: stdin read a key at a time, without echo
//! (termios non-canonical mode, <https://man7.org/linux/man-pages/man3/termios.3.html>),
//! restored when dropped; Ctrl-C arrives as a key (ISIG off) so that the
//! terminal is restored on the way out.

use std::time::Instant;

use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};

/// Stdin in raw mode while this lives.
pub struct Raw {
    saved: Termios,
}

impl Raw {
    /// Stdin in raw mode; `None` when it is not a terminal.
    pub fn stdin() -> Option<Raw> {
        let stdin = std::io::stdin();
        let saved = tcgetattr(&stdin).ok()?;
        let mut raw = saved.clone();
        raw.local_modes.remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
        // A read returns as soon as one byte is there (VMIN 1, VTIME 0).
        raw.special_codes[rustix::termios::SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[rustix::termios::SpecialCodeIndex::VTIME] = 0;
        tcsetattr(&stdin, OptionalActions::Now, &raw).ok()?;
        Some(Raw { saved })
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// The key pressed on the terminal `raw` before `deadline`, if one was
/// (without a terminal: waits until `deadline`, `None`).
pub fn key_until(raw: Option<&Raw>, deadline: Instant) -> Option<u8> {
    let Some(_raw) = raw else {
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        return None;
    };
    let stdin = std::io::stdin();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        let timeout = rustix::time::Timespec {
            tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [rustix::event::PollFd::new(&stdin, rustix::event::PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) => return None,
            Ok(_) => {
                let mut byte = [0u8; 1];
                return match rustix::io::read(&stdin, &mut byte) {
                    // End of input: as `q`.
                    Ok(0) => Some(b'q'),
                    Ok(_) => Some(byte[0]),
                    Err(_) => None,
                };
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
}
