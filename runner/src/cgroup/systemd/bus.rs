//! The few calls stepmon makes to systemd's manager
//! (`org.freedesktop.systemd1.Manager`), over the system bus. Only made
//! when the host shape says systemd manages this process's cgroup: other
//! hosts never open a socket.
//!
//! Not over `/run/systemd/private` (systemd's peer-to-peer socket for
//! root, which needs no bus daemon): systemd sends its messages there with
//! the sender `org.freedesktop.systemd1`, a well-known name where the D-Bus
//! spec has a unique one, and zbus 5.19's reader rejects them with a panic
//! in its executor thread (seen in the VM tier's systemd boot: the call
//! then times out). A host without a bus daemon falls back, and says so.

use std::path::Path;

use zbus::blocking::Connection;
use zbus::zvariant::{OwnedObjectPath, Value as DbusValue};

use super::properties::Value;

/// systemd's private socket, named in the fallback's reason.
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
pub(crate) struct Bus {
    connection: Connection,
    /// Which socket, for messages.
    pub(crate) socket: &'static str,
}

/// Why no connection could be made: each socket tried, with its error.
pub(crate) type ConnectError = String;

/// Why a call failed.
pub(crate) type CallError = zbus::Error;

/// Whether `error` says the unit does not exist (already collected).
#[must_use]
pub(crate) fn is_no_such_unit(error: &CallError) -> bool {
    matches!(error, zbus::Error::MethodError(name, _, _) if name.as_str() == "org.freedesktop.systemd1.NoSuchUnit")
}

impl Bus {
    /// Connects to the system bus.
    pub(crate) fn connect() -> Result<Bus, ConnectError> {
        let mut tried = Vec::new();
        if Path::new(SYSTEM_BUS).exists() {
            match zbus::blocking::connection::Builder::system().and_then(|b| b.method_timeout(CALL_TIMEOUT).build()) {
                Ok(connection) => return Ok(Bus { connection, socket: SYSTEM_BUS }),
                Err(e) => tried.push(format!("{SYSTEM_BUS}: {e}")),
            }
        } else {
            tried.push(format!("{SYSTEM_BUS}: no such socket"));
        }
        if Path::new(PRIVATE).exists() {
            tried.push(format!("{PRIVATE}: not used (zbus rejects the sender name systemd gives its messages there)"));
        } else {
            tried.push(format!("{PRIVATE}: no such socket"));
        }
        Err(tried.join("; "))
    }

    fn call<B>(&self, method: &str, body: &B) -> zbus::Result<zbus::message::Message>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        self.connection.call_method(Some(DESTINATION), PATH, Some(MANAGER), method, body)
    }

    /// `StartTransientUnit(name, "fail", properties, [])`: the job's path.
    pub(crate) fn start_transient_unit(
        &self,
        name: &str,
        properties: &[(&'static str, Value)],
    ) -> zbus::Result<String> {
        let props: Vec<(&str, DbusValue<'_>)> = properties.iter().map(|(n, v)| (*n, dbus_value(v))).collect();
        let aux: Vec<(&str, Vec<(&str, DbusValue<'_>)>)> = Vec::new();
        let reply = self.call("StartTransientUnit", &(name, "fail", props, aux))?;
        let job: OwnedObjectPath = reply.body().deserialize()?;
        Ok(job.as_str().to_owned())
    }

    /// `StopUnit(name, "fail")`.
    pub(crate) fn stop_unit(&self, name: &str) -> zbus::Result<()> {
        self.call("StopUnit", &(name, "fail")).map(drop)
    }

    /// Loaded units whose names match `pattern` (`ListUnitsByPatterns`):
    /// their names and active states.
    pub(crate) fn units(&self, pattern: &str) -> zbus::Result<Vec<(String, String)>> {
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
        Value::Str(s) => DbusValue::from(s.as_str()),
        Value::Strs(list) => DbusValue::from(list.iter().map(String::as_str).collect::<Vec<_>>()),
        Value::U32s(list) => DbusValue::from(list.clone()),
    }
}
