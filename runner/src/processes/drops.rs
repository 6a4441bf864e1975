//! Messages the kernel dropped on a netlink socket: the `Drops` column of
//! `/proc/net/netlink` (the socket's `sk_drops`, what `SO_MEMINFO` reports
//! as `SK_MEMINFO_DROPS`), found by the socket's inode.

use std::os::fd::AsFd;

/// `sk_drops` of the netlink socket `fd`, if `/proc/net/netlink` lists it.
pub(super) fn of(fd: impl AsFd) -> Option<u64> {
    let inode = rustix::fs::fstat(fd).ok()?.st_ino;
    let table = std::fs::read_to_string("/proc/net/netlink").ok()?;
    in_table(&table, inode)
}

/// The `Drops` of the row whose `Inode` is `inode`
/// (`sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode`, net/netlink/af_netlink.c).
fn in_table(table: &str, inode: u64) -> Option<u64> {
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    let drops = header.iter().position(|h| *h == "Drops")?;
    let ino = header.iter().position(|h| *h == "Inode")?;
    lines
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find_map(|row| (row.get(ino)?.parse::<u64>().ok()? == inode).then(|| row.get(drops)?.parse().ok()).flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_of_the_inode() {
        let table = "sk               Eth Pid        Groups   Rmem     Wmem     Dump  Locks    Drops    Inode\n\
                     ffff8a0c1b2e0000 16  1324       00000000 0        0        0     2        0        9001\n\
                     ffff8a0c1b2e0800 11  -4123      00000001 2304     0        0     2        412      9002\n";
        assert_eq!(in_table(table, 9002), Some(412));
        assert_eq!(in_table(table, 9001), Some(0));
        assert_eq!(in_table(table, 7), None);
    }

    #[test]
    fn a_new_socket_has_no_drops() {
        let fd = match super::super::socket::generic() {
            Ok(fd) => fd,
            Err(e) => {
                crate::test_skip::skip(
                    "a_new_socket_has_no_drops",
                    format_args!("no generic netlink socket here: {e}"),
                );
                return;
            }
        };
        assert_eq!(of(&fd), Some(0));
    }
}
