//! The messages of one netlink datagram: each a `struct nlmsghdr`
//! (16 bytes: length, type, flags, sequence, port id) and a payload, padded
//! to 4 bytes (netlink(7); `include/uapi/linux/netlink.h`).

use crate::bytes::{Walk, u16_at, u32_at};
use crate::{Error, Result};

/// `sizeof(struct nlmsghdr)`.
pub const HEADER_LEN: usize = 16;
/// `NLMSG_NOOP`: nothing, skip it.
pub const NLMSG_NOOP: u16 = 1;
/// `NLMSG_ERROR`: an error, or with error 0 an acknowledgement.
pub const NLMSG_ERROR: u16 = 2;
/// `NLMSG_DONE`: the end of a multipart reply; also the type of connector messages.
pub const NLMSG_DONE: u16 = 3;
/// `NLMSG_OVERRUN`: data lost.
pub const NLMSG_OVERRUN: u16 = 4;

/// The fixed header of a netlink message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `nlmsg_len`: header and payload, without the trailing padding.
    pub len: u32,
    /// `nlmsg_type`: `NLMSG_*`, or a generic netlink family id.
    pub kind: u16,
    /// `nlmsg_flags` (`NLM_F_*`).
    pub flags: u16,
    /// `nlmsg_seq`: the sequence number of the request answered, 0 for events.
    pub seq: u32,
    /// `nlmsg_pid`: the sender's port id (0: the kernel).
    pub port: u32,
}

/// One message: its header and the payload after it (unpadded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    /// The header.
    pub header: Header,
    /// `nlmsg_len - 16` bytes after the header.
    pub payload: &'a [u8],
}

/// The payload of an `NLMSG_ERROR` message (`struct nlmsgerr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NlError {
    /// 0 for an acknowledgement, else a negative errno (`-ESRCH` = -3).
    pub error: i32,
    /// The header of the request it answers.
    pub request: Header,
}

impl Header {
    /// Reads the 16-byte header at the start of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<Header> {
        let field = |at| u32_at(bytes, at).ok_or(Error::Truncated { what: "nlmsghdr", offset: 0 });
        let half = |at| u16_at(bytes, at).ok_or(Error::Truncated { what: "nlmsghdr", offset: 0 });
        Ok(Header { len: field(0)?, kind: half(4)?, flags: half(6)?, seq: field(8)?, port: field(12)? })
    }
}

impl<'a> Message<'a> {
    /// Reads an `NLMSG_ERROR` payload; `None` for any other message type.
    pub fn error(&self) -> Option<Result<NlError>> {
        (self.header.kind == NLMSG_ERROR).then(|| {
            let error = u32_at(self.payload, 0).ok_or(Error::Truncated { what: "nlmsgerr", offset: HEADER_LEN })?;
            let request = Header::parse(self.payload.get(4..).unwrap_or_default())
                .map_err(|_| Error::Truncated { what: "nlmsgerr request header", offset: HEADER_LEN + 4 })?;
            Ok(NlError { error: i32::from_ne_bytes(error.to_ne_bytes()), request })
        })
    }
}

/// Iterator over the messages of one datagram (`NLMSG_OK` / `NLMSG_NEXT`).
/// After an error it ends.
#[derive(Clone, Debug)]
pub struct Messages<'a> {
    walk: Walk<'a>,
}

impl<'a> Messages<'a> {
    /// Walks `datagram`, as `recv` returned it.
    #[must_use]
    pub fn new(datagram: &'a [u8]) -> Messages<'a> {
        Messages { walk: Walk::new(datagram) }
    }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<Message<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.walk.next_item(HEADER_LEN, "nlmsg_len", |rest, offset| {
            let header = Header::parse(rest).map_err(|_| Error::Truncated { what: "nlmsghdr", offset })?;
            Ok((header, usize::try_from(header.len).unwrap_or(usize::MAX)))
        })?;
        Some(item.map(|(header, payload)| Message { header, payload }))
    }
}

impl core::iter::FusedIterator for Messages<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_ack_is_an_error_message_with_error_0() {
        let ack = include_bytes!("../tests/data/ack.bin");
        let mut messages = Messages::new(ack);
        let m = messages.next().unwrap().unwrap();
        assert!(messages.next().is_none());
        let e = m.error().unwrap().unwrap();
        assert_eq!(e.error, 0);
        assert_eq!(e.request.kind, 0x10, "answers the request to the controller (GENL_ID_CTRL)");
        assert_eq!(e.request.seq, m.header.seq);
    }

    #[test]
    fn a_query_for_a_missing_pid_is_esrch() {
        let e = Messages::new(include_bytes!("../tests/data/get-pid-error.bin")).next().unwrap().unwrap();
        assert_eq!(e.error().unwrap().unwrap().error, -3);
    }

    #[test]
    fn lengths_that_do_not_fit_are_errors_and_end_the_walk() {
        let mut short = [0u8; 16];
        short[0] = 8;
        let mut it = Messages::new(&short);
        assert_eq!(it.next(), Some(Err(Error::BadLength { what: "nlmsg_len", offset: 0, declared: 8 })));
        assert_eq!(it.next(), None);
        let mut long = [0u8; 16];
        long[0] = 17;
        assert!(matches!(Messages::new(&long).next(), Some(Err(Error::BadLength { declared: 17, .. }))));
        assert!(matches!(Messages::new(&[1, 2, 3]).next(), Some(Err(Error::Truncated { .. }))));
    }
}
