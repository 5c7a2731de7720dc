//! The MCP server (`factory serve-mcp`).
