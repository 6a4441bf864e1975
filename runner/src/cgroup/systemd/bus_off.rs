//! The D-Bus client (`bus.rs`) in a build without the `systemd` feature: the same API,
//! no D-Bus client linked. [`Bus::connect`] always fails, with the reason;
//! no `Bus` can exist, so no call is ever made.

use std::convert::Infallible;

use super::properties::Value;

/// A connection to systemd: never made in this build.
#[derive(Debug)]
pub(crate) struct Bus {
    /// Which socket, for messages.
    pub(crate) socket: &'static str,
    never: Infallible,
}

/// Why no connection could be made.
pub(crate) type ConnectError = String;

/// Why a call failed (no call is made in this build).
pub(crate) type CallError = Infallible;

/// Whether `error` says the unit does not exist.
#[must_use]
pub(crate) fn is_no_such_unit(error: &CallError) -> bool {
    match *error {}
}

impl Bus {
    /// Fails: this stepmon has no D-Bus client.
    pub(crate) fn connect() -> Result<Bus, ConnectError> {
        Err("this stepmon was built without the `systemd` feature (no D-Bus client)".to_owned())
    }

    /// Never called: no `Bus` exists.
    pub(crate) fn start_transient_unit(
        &self,
        _name: &str,
        _properties: &[(&'static str, Value)],
    ) -> Result<String, CallError> {
        match self.never {}
    }

    /// Never called: no `Bus` exists.
    pub(crate) fn stop_unit(&self, _name: &str) -> Result<(), CallError> {
        match self.never {}
    }

    /// Never called: no `Bus` exists.
    pub(crate) fn units(&self, _pattern: &str) -> Result<Vec<(String, String)>, CallError> {
        match self.never {}
    }
}
