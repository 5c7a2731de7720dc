//! `factory worktrees list|clean [PATH]`: the worktrees factory made for a project,
//! and removing the ones no longer needed.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use factory_runtime::worktrees::clean::{self, Done, Summary};
use factory_runtime::worktrees::inventory;

use super::{FAILED, OK, USAGE, report};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Every experiment worktree: id, status (open, the verdict, orphaned, missing),
    /// branch, path, commits ahead of its base, uncommitted changes, hypothesis.
    List {
        /// Project root.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print a JSON array, one object per worktree.
        #[arg(long)]
        json: bool,
    },
    /// Remove the worktrees of finished experiments and orphaned or missing ones,
    /// after showing what goes; never an open experiment's.
    #[command(after_help = "\
A revert's or an error's branch is deleted with its worktree, as finalize does; every
other branch stays. A worktree with uncommitted changes is left alone. Without a
terminal to ask on, --yes is required (or --dry-run).")]
    Clean {
        /// Project root.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Remove without asking.
        #[arg(long)]
        yes: bool,
        /// Show what would be removed and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(args: Args) -> ExitCode {
    match args.action {
        Action::List { path, json } => list(path, json),
        Action::Clean { path, yes, dry_run } => clean(path, yes, dry_run),
    }
}

fn list(path: PathBuf, json: bool) -> ExitCode {
    if let Err(code) = super::require_dir(&path, "factory worktrees list .") {
        return code;
    }
    let entries = match inventory::list(&path) {
        Ok(e) => e,
        Err(e) => return report(e, USAGE),
    };
    if json {
        if let Err(code) = super::print_json(&entries) {
            return code;
        }
    } else {
        print!("{}", inventory::render(&path, &entries));
    }
    ExitCode::from(OK)
}

fn clean(path: PathBuf, yes: bool, dry_run: bool) -> ExitCode {
    if let Err(code) = super::require_dir(&path, "factory worktrees clean .") {
        return code;
    }
    let plan = match clean::plan(&path) {
        Ok(p) => p,
        Err(e) => return report(e, USAGE),
    };
    print!("{}", clean::render_plan(&path, &plan));
    if plan.remove.is_empty() {
        println!("{}", Summary::of(&plan, &[]));
        return ExitCode::from(OK);
    }
    if dry_run {
        println!("dry run: nothing removed");
        return ExitCode::from(OK);
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            return report(
                miette::miette!(
                    help = "run it on a terminal to be asked, or pass --yes to remove them (--dry-run only shows them)",
                    "no terminal to confirm on; nothing removed"
                ),
                USAGE,
            );
        }
        match confirm(plan.remove.len()) {
            Ok(true) => {}
            Ok(false) => {
                println!("nothing removed");
                return ExitCode::from(OK);
            }
            Err(e) => return report(miette::miette!("cannot read the answer: {e}"), USAGE),
        }
    }
    let done = clean::execute(&path, &plan);
    let summary = Summary::of(&plan, &done);
    for (id, d) in done {
        match d {
            Done::Skipped(why) => println!("left exp-{id:03}: {why}"),
            Done::Failed(e) => {
                eprintln!("exp-{id:03} could not be removed:");
                eprintln!("{:?}", miette::Report::new(e));
            }
            Done::Removed(_) | Done::Gone => {}
        }
    }
    println!("{summary}");
    ExitCode::from(if summary.failed > 0 { FAILED } else { OK })
}

fn confirm(n: usize) -> std::io::Result<bool> {
    print!(
        "remove {n} worktree{}? [y/N] ",
        if n == 1 { "" } else { "s" }
    );
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}
