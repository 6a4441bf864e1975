//! The few calls stepmon makes to systemd's manager
//! (`org.freedesktop.systemd1.Manager`), over `/run/systemd/private` (root
//! only; systemd speaks D-Bus peer to peer there, no bus daemon needed) or
//! the system bus. Only made when the host shape says systemd manages this
//! process's cgroup: other hosts never open a socket.

use std::path::Path;

use zbus::blocking::Connection;
use zbus::zvariant::{OwnedObjectPath, Value as DbusValue};

use super::properties::Value;

/// systemd's private socket (`systemctl` as root uses it).
const PRIVATE: &str = "/run/systemd/private";
/// The system bus (dbus-daemon or dbus-broker).
const SYSTEM_BUS: &str = "/run/dbus/system_bus_socket";

const DESTINATION: &str = "org.freedesktop.systemd1";
const PATH: &str = "/org/freedesktop/systemd1";
const MANAGER: &str = "org.freedesktop.systemd1.Manager";
/// How long a call may take: a manager that does not answer (busy, hung)
/// makes the step fall back instead of waiting forever.
const CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// A connection to systemd.
#[derive(Debug)]
pub struct Bus {
    connection: Connection,
    /// Whether this is the private socket (no destination in calls).
    p2p: bool,
    /// Which socket, for messages.
    pub socket: &'static str,
}

/// Why no connection could be made: each socket tried, with its error.
pub type ConnectError = String;

impl Bus {
    /// Connects: the private socket first as root, then the system bus.
    pub fn connect(euid: u32) -> Result<Bus, ConnectError> {
        let mut tried = Vec::new();
        if euid == 0 {
            match zbus::blocking::connection::Builder::address(format!("unix:path={PRIVATE}").as_str())
                .map(|b| b.p2p().method_timeout(CALL_TIMEOUT).build())
            {
                Ok(Ok(connection)) => return Ok(Bus { connection, p2p: true, socket: PRIVATE }),
                Ok(Err(e)) | Err(e) => tried.push(format!("{PRIVATE}: {e}")),
            }
        }
        if Path::new(SYSTEM_BUS).exists() {
            match zbus::blocking::connection::Builder::system().and_then(|b| b.method_timeout(CALL_TIMEOUT).build()) {
                Ok(connection) => return Ok(Bus { connection, p2p: false, socket: SYSTEM_BUS }),
                Err(e) => tried.push(format!("{SYSTEM_BUS}: {e}")),
            }
        } else {
            tried.push(format!("{SYSTEM_BUS}: no such socket"));
        }
        Err(tried.join("; "))
    }

    fn call<B>(&self, method: &str, body: &B) -> zbus::Result<zbus::message::Message>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        let destination = (!self.p2p).then_some(DESTINATION);
        self.connection.call_method(destination, PATH, Some(MANAGER), method, body)
    }

    /// `StartTransientUnit(name, "fail", properties, [])`: the job's path.
    pub fn start_transient_unit(&self, name: &str, properties: &[(&'static str, Value)]) -> zbus::Result<String> {
        let props: Vec<(&str, DbusValue<'_>)> = properties.iter().map(|(n, v)| (*n, dbus_value(v))).collect();
        let aux: Vec<(&str, Vec<(&str, DbusValue<'_>)>)> = Vec::new();
        let reply = self.call("StartTransientUnit", &(name, "fail", props, aux))?;
        let job: OwnedObjectPath = reply.body().deserialize()?;
        Ok(job.as_str().to_owned())
    }

    /// `StopUnit(name, "fail")`.
    pub fn stop_unit(&self, name: &str) -> zbus::Result<()> {
        self.call("StopUnit", &(name, "fail")).map(drop)
    }

    /// Loaded units whose names match `pattern` (`ListUnitsByPatterns`):
    /// their names and active states.
    pub fn units(&self, pattern: &str) -> zbus::Result<Vec<(String, String)>> {
        type Row = (String, String, String, String, String, String, OwnedObjectPath, u32, String, OwnedObjectPath);
        let states: Vec<&str> = Vec::new();
        let reply = self.call("ListUnitsByPatterns", &(states, vec![pattern]))?;
        let rows: Vec<Row> = reply.body().deserialize()?;
        Ok(rows.into_iter().map(|r| (r.0, r.3)).collect())
    }
}

fn dbus_value(value: &Value) -> DbusValue<'_> {
    match value {
        Value::Bool(b) => DbusValue::from(*b),
        Value::U64(n) => DbusValue::from(*n),
        Value::Str(s) => DbusValue::from(s.as_str()),
        Value::Strs(list) => DbusValue::from(list.iter().map(String::as_str).collect::<Vec<_>>()),
        Value::U32s(list) => DbusValue::from(list.clone()),
    }
}
