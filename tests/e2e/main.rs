//! Every end-to-end test of the `factory` binary, in one test binary: one link of the
//! whole dependency graph instead of one per file. Each module is one area; a single
//! one runs with `cargo test --test e2e MODULE::` (say, `run_resume::`).

#[path = "support/cdp.rs"]
mod cdp;
mod support;

mod ace_cli;
mod ci_and_readme;
mod cli_agent;
mod cli_check;
mod cli_check_fix;
mod cli_compile;
mod cli_evolve;
mod cli_fmt;
mod cli_refusals;
mod cli_runners;
mod cli_skills;
mod cli_worktrees;
mod contained;
mod dashboard_graph;
mod dashboard_live;
mod demo;
mod docs_cli_examples;
mod docs_modes;
mod editors;
mod eval_cli;
mod event_chain;
mod evolve_search;
mod evolve_trial;
mod experiment_evidence;
mod experiment_isolation;
mod experiment_store;
mod first_use;
mod gate_attribution;
mod gate_changes;
mod gate_core;
mod gate_history;
mod gate_js_runners;
mod gate_setup;
mod gate_tests_identity;
mod graph_cli;
mod layering;
mod lifecycle;
mod lsp_e2e;
mod mcp;
mod mode_commands;
mod notify_e2e;
mod parallel_e2e;
mod run_control;
mod run_e2e;
mod run_errors;
mod run_resume;
mod sandbox;
mod secrets_and_config;
mod skill_follow;
