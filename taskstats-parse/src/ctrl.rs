//! The generic netlink controller's `CTRL_CMD_GETFAMILY` reply: which
//! family id the kernel gave a family name such as `"TASKSTATS"`
//! (`include/uapi/linux/genetlink.h`).

use crate::genl::{GenlMessage, find};
use crate::{Error, Result};

/// `GENL_ID_CTRL`: the controller's fixed family id (the `nlmsg_type` of requests to it).
pub const GENL_ID_CTRL: u16 = 0x10;
/// `CTRL_CMD_NEWFAMILY`: the reply's command.
pub const CTRL_CMD_NEWFAMILY: u8 = 1;
/// `CTRL_CMD_GETFAMILY`: the request's command.
pub const CTRL_CMD_GETFAMILY: u8 = 3;
/// `CTRL_ATTR_FAMILY_ID` (u16).
pub const CTRL_ATTR_FAMILY_ID: u16 = 1;
/// `CTRL_ATTR_FAMILY_NAME` (NUL-terminated string).
pub const CTRL_ATTR_FAMILY_NAME: u16 = 2;

/// A family as the controller describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Family<'a> {
    /// The id to put in `nlmsg_type` of requests to the family.
    pub id: u16,
    /// Its name, without the NUL.
    pub name: &'a [u8],
}

impl<'a> Family<'a> {
    /// Reads a `CTRL_CMD_NEWFAMILY` reply's genetlink payload (after the netlink header).
    pub fn parse(payload: &'a [u8]) -> Result<Family<'a>> {
        let message = GenlMessage::parse(payload)?;
        if message.cmd != CTRL_CMD_NEWFAMILY {
            return Err(Error::UnexpectedKind { expected: "CTRL_CMD_NEWFAMILY", found: u32::from(message.cmd) });
        }
        let id = find(message.attrs(), CTRL_ATTR_FAMILY_ID)?
            .ok_or(Error::MissingAttribute { what: "CTRL_ATTR_FAMILY_ID" })?
            .u16()?;
        let name = find(message.attrs(), CTRL_ATTR_FAMILY_NAME)?
            .ok_or(Error::MissingAttribute { what: "CTRL_ATTR_FAMILY_NAME" })?
            .c_str();
        Ok(Family { id, name })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::Messages;

    #[test]
    fn the_captured_reply_names_taskstats_and_its_id() {
        let m = Messages::new(include_bytes!("../tests/data/getfamily-reply.bin")).next().unwrap().unwrap();
        assert_eq!(m.header.kind, GENL_ID_CTRL);
        let family = Family::parse(m.payload).unwrap();
        assert_eq!(family.name, b"TASKSTATS");
        // The id was 31 on the host of the capture (it is dynamic: GENL_ID_GENERATE).
        assert_eq!(family.id, 31);
    }

    #[test]
    fn other_commands_and_missing_attributes_are_errors() {
        assert!(matches!(Family::parse(&[2, 1, 0, 0]), Err(Error::UnexpectedKind { found: 2, .. })));
        assert_eq!(Family::parse(&[1, 1, 0, 0]), Err(Error::MissingAttribute { what: "CTRL_ATTR_FAMILY_ID" }));
    }
}
