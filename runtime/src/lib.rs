//! The factory runtime.
//!
//! Store and state modules (this crate's `.factory/` contract):
//! - [`layout`]: where every file under `.factory/` lives; [`layout::ensure_factory_dir`].
//! - [`events`]: the append-only `events.jsonl` log.
//! - [`store`]: experiment lifecycle (`begin`/`finalize`/`history`) and `results.tsv`.
//! - [`registry`]: the per-user project index (`~/.factory/registry.json`).
//! - [`fsutil`]: atomic writes and file locks shared by all of the above.
//!
//! Experiment-core modules:
//! - [`eval`]: hygiene/growth/project dimensions and the composite score (A.1).
//! - [`discovery`]: project introspection and the eval profile.
//! - [`guards`]: git-derived safety checks (scope, fixed surfaces, eval/ immutability, tests kept).
//! - [`strategy`]: FEEC categorisation and anti-pattern detection (A.2).
//! - [`precheck`]: the aggregate keep gate.
//! - [`process`]: subprocesses with a timeout that kills the process group.

pub mod config;
pub mod discovery;
pub mod eval;
pub mod events;
pub mod fsutil;
pub mod guards;
pub mod layout;
pub mod precheck;
pub mod process;
pub mod registry;
pub mod store;
pub mod strategy;
