//! What the report tests share: job records.
#![allow(dead_code)] // each test file uses a part

pub(crate) mod job;
