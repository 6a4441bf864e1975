//! Placeholder: filled by issue 3.
#![deny(missing_docs)]
