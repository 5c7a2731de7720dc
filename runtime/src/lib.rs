//! The factory runtime, in rooms. Each room uses only the rooms listed before it
//! (`tests/e2e/layering.rs` checks this order; tests may use anything):
//!
//! - [`sys`]: atomic writes, file locks, the clock, subprocesses whose timeout kills
//!   the process group.
//! - [`project`]: the `.factory/` layout, `factory.md` config, the registry.
//! - [`user_config`]: `~/.factory/config.toml` — defaults, models, credentials,
//!   runners, notifiers — layered with the project's.
//! - [`events`]: the append-only, chained `events.jsonl` log.
//! - [`store`]: experiments (`begin`/`finalize`), `results.tsv`, the tiered history.
//! - [`worktrees`]: each experiment's branch `factory/exp-NNN` and its git worktree;
//!   pristine scratch copies of commits.
//! - [`placement`]: where a node's processes run — the host, or a bubblewrap sandbox
//!   made from the node's reads and writes (the probe, the policy, the argv).
//! - [`eval`]: hygiene/growth/project dimensions, the composite score (A.1), discovery.
//! - [`strategy`]: FEEC categorisation and anti-patterns (A.2), plateaus, the adversarial loop.
//! - [`guards`]: git-derived safety checks (scope, fixed surfaces, eval/ immutability, tests kept).
//! - [`precheck`]: the aggregate keep gate.
//! - [`notify`]: run ends and verdicts sent to webhooks and commands (user config).
//! - [`experiment`]: begin (store + worktree), precheck records, the enforced keep.
//! - [`insights`]: keep rate, revert reasons and failing checks across projects.
//! - [`study`]: the observations report (`.factory/strategy/observations.md`).
//! - [`runners`]: the runner trait and the `exec` and `replay` runners (async).
//! - [`agents`]: prompt tiers (role prompts, the playbook format) and one agent
//!   invocation — events, review, outputs.
//! - [`ace`]: learning each role's playbook from its runs — reflect, curate, report.
//! - [`exec`]: the executor — a pure machine over the IR, its tokio driver, and the
//!   parallel nodes' fan-out and selection.
//! - [`evolve`]: the outer loop's mutation operators on IR and the isomorphism-invariant hash.
//! - [`demo`]: the embedded demo project `factory demo` improves.
//! - [`detect`]: the project's state (§7.1), for routing and the dashboard.
//! - [`doctor`]: the readiness checks `factory doctor` runs, by the rules `factory run`
//!   applies.
//!
//! docs/architecture.md draws the same rooms.

pub mod ace;
pub mod agents;
pub mod demo;
pub mod detect;
pub mod doctor;
pub mod eval;
pub mod events;
pub mod evolve;
pub mod exec;
pub mod experiment;
pub mod guards;
pub mod insights;
pub mod notify;
pub mod placement;
pub mod precheck;
pub mod project;
pub mod runners;
pub mod store;
pub mod strategy;
pub mod study;
pub mod sys;
pub mod user_config;
pub mod worktrees;
