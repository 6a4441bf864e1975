//! Bounds-checked reads of host-order integers at a byte offset: `None`
//! past the end, never a panic.

pub(crate) fn u8_at(b: &[u8], at: usize) -> Option<u8> {
    b.get(at).copied()
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// `len` rounded up to netlink's 4-byte alignment (`NLMSG_ALIGN`, `NLA_ALIGN`).
pub(crate) fn align4(len: usize) -> Option<usize> {
    Some(len.checked_add(3)? & !3)
}

/// A walk over a run of length-prefixed items padded to 4 bytes (netlink
/// messages, attributes): each item declares its length including its
/// header; the last may lack its padding. After an error the walk ends.
#[derive(Clone, Debug)]
pub(crate) struct Walk<'a> {
    rest: &'a [u8],
    offset: usize,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Walk<'a> {
        Walk { rest: bytes, offset: 0 }
    }

    /// The next item: `read` takes the remaining bytes and their offset and
    /// returns the header and its declared length (`what` names that field);
    /// the item's payload is the bytes after `header_len` up to that length.
    pub(crate) fn next_item<H>(
        &mut self,
        header_len: usize,
        what: &'static str,
        read: impl FnOnce(&'a [u8], usize) -> crate::Result<(H, usize)>,
    ) -> Option<crate::Result<(H, &'a [u8])>> {
        if self.rest.is_empty() {
            return None;
        }
        let offset = self.offset;
        let step = read(self.rest, offset).and_then(|(header, declared)| {
            let bad = crate::Error::BadLength { what, offset, declared };
            if declared < header_len {
                return Err(bad);
            }
            let payload = self.rest.get(header_len..declared).ok_or(bad)?;
            let next = align4(declared).ok_or(bad)?.min(self.rest.len());
            Ok((header, payload, next))
        });
        match step {
            Ok((header, payload, next)) => {
                self.rest = self.rest.get(next..).unwrap_or_default();
                self.offset = offset.saturating_add(next);
                Some(Ok((header, payload)))
            }
            Err(err) => {
                self.rest = &[];
                Some(Err(err))
            }
        }
    }
}
