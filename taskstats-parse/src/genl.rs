//! Generic netlink: the 4-byte `struct genlmsghdr` (command, version) after
//! the netlink header, then attributes, each a `struct nlattr` (length,
//! type) and a payload padded to 4 bytes (`include/uapi/linux/genetlink.h`,
//! `include/uapi/linux/netlink.h`; <https://docs.kernel.org/userspace-api/netlink/intro.html>).

use crate::bytes::{Walk, u8_at, u16_at};
use crate::{Error, Result};

/// `sizeof(struct genlmsghdr)`.
pub const HEADER_LEN: usize = 4;
/// `sizeof(struct nlattr)`.
pub const ATTR_HEADER_LEN: usize = 4;
/// `NLA_F_NESTED | NLA_F_NET_BYTEORDER`: flag bits of `nla_type`, not part of the type.
const NLA_FLAGS: u16 = 0xc000;

/// A generic netlink message: command, version and its attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenlMessage<'a> {
    /// `cmd`.
    pub cmd: u8,
    /// `version`.
    pub version: u8,
    /// The bytes after the header: attributes, walked by [`GenlMessage::attrs`].
    pub body: &'a [u8],
}

impl<'a> GenlMessage<'a> {
    /// Reads the header of a netlink message's payload.
    pub fn parse(payload: &'a [u8]) -> Result<GenlMessage<'a>> {
        let truncated = Error::Truncated { what: "genlmsghdr", offset: 0 };
        let cmd = u8_at(payload, 0).ok_or(truncated)?;
        let version = u8_at(payload, 1).ok_or(truncated)?;
        let body = payload.get(HEADER_LEN..).ok_or(truncated)?;
        Ok(GenlMessage { cmd, version, body })
    }

    /// The top-level attributes.
    #[must_use]
    pub fn attrs(&self) -> Attrs<'a> {
        Attrs::new(self.body)
    }
}

/// One attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr<'a> {
    /// `nla_type` without the `NLA_F_*` flag bits.
    pub kind: u16,
    /// `nla_len - 4` bytes (unpadded).
    pub payload: &'a [u8],
}

impl<'a> Attr<'a> {
    /// The attributes nested in this one's payload.
    #[must_use]
    pub fn nested(&self) -> Attrs<'a> {
        Attrs::new(self.payload)
    }

    /// The payload as a `u32` (`NLA_U32`).
    pub fn u32(&self) -> Result<u32> {
        let b: [u8; 4] = self.payload.try_into().map_err(|_| Error::Truncated { what: "u32 attribute", offset: 0 })?;
        Ok(u32::from_ne_bytes(b))
    }

    /// The payload as a `u16` (`NLA_U16`).
    pub fn u16(&self) -> Result<u16> {
        u16_at(self.payload, 0).ok_or(Error::Truncated { what: "u16 attribute", offset: 0 })
    }

    /// The payload up to its first NUL (`NLA_NUL_STRING`), all of it without one.
    #[must_use]
    pub fn c_str(&self) -> &'a [u8] {
        until_nul(self.payload)
    }
}

/// `bytes` up to the first NUL.
pub(crate) fn until_nul(bytes: &[u8]) -> &[u8] {
    bytes.split(|&b| b == 0).next().unwrap_or_default()
}

/// Iterator over a run of attributes (`nla_ok` / `nla_next`); ends after an error.
#[derive(Clone, Debug)]
pub struct Attrs<'a> {
    walk: Walk<'a>,
}

impl<'a> Attrs<'a> {
    /// Walks `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Attrs<'a> {
        Attrs { walk: Walk::new(bytes) }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.walk.next_item(ATTR_HEADER_LEN, "nla_len", |rest, offset| {
            let truncated = Error::Truncated { what: "nlattr", offset };
            let declared = usize::from(u16_at(rest, 0).ok_or(truncated)?);
            Ok((u16_at(rest, 2).ok_or(truncated)? & !NLA_FLAGS, declared))
        })?;
        Some(item.map(|(kind, payload)| Attr { kind, payload }))
    }
}

impl core::iter::FusedIterator for Attrs<'_> {}

/// The first attribute of type `kind` in `attrs`, or the first error met before it.
pub(crate) fn find<'a>(attrs: Attrs<'a>, kind: u16) -> Result<Option<Attr<'a>>> {
    for attr in attrs {
        let attr = attr?;
        if attr.kind == kind {
            return Ok(Some(attr));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_padded_to_four_bytes_and_flags_are_masked() {
        // len 5 (1 byte payload, 3 padding), then a nested-flagged u32.
        let bytes = [5, 0, 1, 0, 7, 0, 0, 0, 8, 0, 2, 0x80, 1, 2, 3, 4];
        let attrs: Vec<_> = Attrs::new(&bytes).collect::<Result<_>>().unwrap();
        assert_eq!(attrs.len(), 2);
        assert_eq!(attrs[0], Attr { kind: 1, payload: &[7] });
        assert_eq!(attrs[1].kind, 2);
        assert_eq!(attrs[1].u32().unwrap(), u32::from_ne_bytes([1, 2, 3, 4]));
        assert!(attrs[0].u32().is_err());
    }

    #[test]
    fn a_short_attribute_is_an_error_not_a_loop() {
        let mut it = Attrs::new(&[2, 0, 1, 0]);
        assert!(matches!(it.next(), Some(Err(Error::BadLength { declared: 2, .. }))));
        assert!(it.next().is_none());
        assert!(matches!(Attrs::new(&[9, 0, 1, 0, 0]).next(), Some(Err(Error::BadLength { .. }))));
        assert!(matches!(Attrs::new(&[9]).next(), Some(Err(Error::Truncated { .. }))));
    }
}
