//! The factory runtime, in layers; each depends only on those listed before it.
//!
//! - [`sys`]: atomic writes, file locks, subprocesses whose timeout kills the process group.
//! - [`project`]: the `.factory/` layout, `factory.md` config, project state, the registry.
//! - [`events`]: the append-only `events.jsonl` log.
//! - [`store`]: experiments (`begin`/`finalize`), `results.tsv`, the tiered history.
//! - [`worktrees`]: each experiment's branch `factory/exp-NNN` and its git worktree;
//!   pristine scratch copies of commits.
//! - [`eval`]: hygiene/growth/project dimensions, the composite score (A.1), discovery.
//! - [`strategy`]: FEEC categorisation and anti-patterns (A.2), plateaus, the adversarial loop.
//! - [`guards`]: git-derived safety checks (scope, fixed surfaces, eval/ immutability, tests kept).
//! - [`precheck`]: the aggregate keep gate.
//! - [`experiment`]: begin (store + worktree), precheck records, the enforced keep.
//! - [`notify`]: run ends and verdicts sent to webhooks and commands (user config).
//! - [`study`]: the observations report (`.factory/strategy/observations.md`).
//! - [`runners`]: the runner trait and the `exec` and `replay` runners (async).
//! - [`ace`]: learned per-role playbooks — reflect, curate, the playbook format.
//! - [`agents`]: prompt tiers and one agent invocation — events, review, outputs.
//! - [`exec`]: the executor — a pure machine over the IR and its tokio driver.
//! - [`evolve`]: the outer loop's mutation operators on IR and the isomorphism-invariant hash.
//! - [`demo`]: the embedded demo project `factory demo` improves.
//!
//! docs/architecture.md draws the same layers.

pub mod ace;
pub mod agents;
pub mod demo;
pub mod eval;
pub mod events;
pub mod evolve;
pub mod exec;
pub mod experiment;
pub mod guards;
pub mod insights;
pub mod notify;
pub mod parallel;
pub mod precheck;
pub mod project;
pub mod runners;
pub mod store;
pub mod strategy;
pub mod study;
pub mod sys;
pub mod user_config;
pub mod worktrees;
