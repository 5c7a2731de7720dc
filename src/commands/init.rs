//! `factory init [PATH] [--reparse]`: derive `.factory/config.json` from `factory.md`.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::project::config::{self, ConfigError};

use super::{FAILED, OK, report};

/// Set a project up for factory: parse factory.md into .factory/config.json and add
/// .factory/ to the project's .gitignore.
#[derive(clap::Args)]
#[command(after_help = "\
An existing config.json is left alone unless --reparse is given; --reparse keeps the
previous one as .factory/config.json.bak when it differs.

Examples:
  factory init                 # in the project root
  factory init ../my-project --reparse")]
pub struct Args {
    /// Project root (holds factory.md).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Regenerate config.json from factory.md even if it exists.
    #[arg(long)]
    reparse: bool,
}

pub fn run(args: Args) -> ExitCode {
    match config::init_project(&args.path, args.reparse) {
        Ok(r) => {
            if r.wrote_config {
                println!("wrote {}", r.config_path.display());
            } else {
                println!(
                    "{} already exists; run `factory init --reparse` to regenerate it from factory.md",
                    r.config_path.display()
                );
            }
            if let Some(bak) = r.backup {
                println!("kept the previous config as {}", bak.display());
            }
            if let Some(warning) = config::load(&args.path)
                .ok()
                .and_then(|c| factory_runtime::eval::declared::test_runner_warning(&c.eval_command))
            {
                eprintln!("warning: {warning}");
            }
            if r.gitignore_updated {
                println!(
                    "added .factory/ to {}; commit it (experiments start from committed \
                     files): git add .gitignore && git commit -m \"Ignore factory's state\"",
                    args.path.join(".gitignore").display()
                );
            }
            ExitCode::from(OK)
        }
        Err(err) => {
            let code = match err {
                // factory.md is what init reads: without it there is nothing to do
                // until the user writes one.
                ConfigError::MissingFactoryMd { .. } => FAILED,
                _ => super::config_exit_code(&err),
            };
            report(err, code)
        }
    }
}
