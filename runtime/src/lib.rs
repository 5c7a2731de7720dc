//! The factory runtime.
//!
//! The `.factory/` contract and project state:
//! - [`layout`]: where every file under `.factory/` lives; [`layout::ensure_factory_dir`].
//! - [`events`]: the append-only `events.jsonl` log.
//! - [`store`]: experiment lifecycle (`begin`/`finalize`/`history`) and `results.tsv`.
//! - [`registry`]: the per-user project index (`~/.factory/registry.json`).
//! - [`config`]: `factory.md` → `FactoryConfig` → `.factory/config.json`; [`config::load`].
//! - [`state`]: which of the five project states a path is in.
//! - [`history`]: the tiered (full / one-line / aggregate) history view.
//! - [`plateau`]: research plateau detection.
//! - [`adversarial`]: the generator/discriminator phase machine and its state file.
//! - [`fsutil`], [`process`]: atomic writes, file locks, subprocesses whose timeout
//!   kills the whole process group.
//!
//! The experiment core:
//! - [`eval`]: hygiene/growth/project dimensions and the composite score (A.1).
//! - [`discovery`]: project introspection and the eval profile.
//! - [`guards`]: git-derived safety checks (scope, fixed surfaces, eval/ immutability, tests kept).
//! - [`strategy`]: FEEC categorisation and anti-pattern detection (A.2).
//! - [`precheck`]: the aggregate keep gate.
//! - [`lifecycle`]: finalize, and move the growth baseline on a keep.

pub mod adversarial;
pub mod config;
pub mod discovery;
pub mod eval;
pub mod events;
pub mod fsutil;
pub mod guards;
pub mod history;
pub mod layout;
pub mod lifecycle;
pub mod plateau;
pub mod precheck;
pub mod process;
pub mod registry;
pub mod state;
pub mod store;
pub mod strategy;
