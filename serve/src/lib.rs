//! factory outside the terminal: a live web dashboard (`factory dashboard`) and an MCP
//! server (`factory serve-mcp`). Kept out of `factory-runtime` so the engine and its tests
//! build without a web stack; both read the same `.factory/` files the CLI writes.

pub mod dashboard;
pub mod mcp;
