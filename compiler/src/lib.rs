//! The .fwf compiler.
