//! The factory runtime.
//!
//! Store and state modules (this crate's `.factory/` contract):
//! - [`layout`]: where every file under `.factory/` lives; [`layout::ensure_factory_dir`].
//! - [`events`]: the append-only `events.jsonl` log.
//! - [`store`]: experiment lifecycle (`begin`/`finalize`/`history`) and `results.tsv`.
//! - [`registry`]: the per-user project index (`~/.factory/registry.json`).
//! - [`fsutil`]: atomic writes and file locks shared by all of the above.

pub mod config;
pub mod events;
pub mod fsutil;
pub mod layout;
pub mod process;
pub mod registry;
pub mod state;
pub mod store;
