//! The factory runtime.
