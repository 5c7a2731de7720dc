//! The web dashboard (`factory dashboard`): the registered projects, each project's
//! experiments and runs, one experiment in full, a live run's graph updated over
//! Server-Sent Events as `events.jsonl` grows, and cross-project insights.
//!
//! It only reads: project files are opened read-only, nothing is written anywhere.
//! Every file is a best-effort input: one that is missing, malformed or huge degrades
//! its panel with a message, never the server.
//!
//! - [`server`]: binding, the token, serving until Ctrl-C.
//! - [`routes`]: the URL map; handlers call the views off the async threads.
//! - [`views`]: one module per page, each returning HTML.
//! - [`live`]: following a run's events (file watching and the SSE stream).
//! - [`graph`], [`chart`], [`markdown`], [`layout`], [`assets`]: the pieces pages use.

mod assets;
mod auth;
mod chart;
mod graph;
mod layout;
mod live;
mod markdown;
mod routes;
mod server;
mod sse;
mod views;

pub use server::{Bound, DashboardError, Options, bind, run_until_ctrl_c};
