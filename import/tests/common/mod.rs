//! What the import tests share: the recorded and constructed build
//! history bundles, and the real consumers of the formats (a CommonMark
//! parser, Python's parsers).
#![allow(dead_code)] // each test file uses a part

pub(crate) mod bundle;
#[path = "../../../export/tests/common/markdown.rs"]
pub(crate) mod markdown;
#[allow(unused_imports)] // each test file uses a part
pub(crate) use stepmon_testsupport::{
    consumers::{openmetrics_python_or_skip, pipe, python_with},
    skip,
};
