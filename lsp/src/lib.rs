//! The factory language server (placeholder until the LSP issue lands).
