//! `factory lsp`: the language server for .fwf files, over stdio.

use std::process::ExitCode;

use super::{OK, USAGE};

#[derive(clap::Args)]
#[command(
    about = "Run the language server for .fwf workflows (speaks LSP on stdin/stdout)",
    long_about = "Run the language server for .fwf workflows. Editors start it and talk LSP \
over stdin/stdout: diagnostics as you type (every compiler code), hover, go to definition, \
references, rename, outline, completion and formatting. See docs/lsp.md and editors/.",
    after_help = "Example (editors run this for you):\n  factory lsp"
)]
pub struct Args {
    /// Accepted for editors that pass it; stdio is the only transport.
    #[arg(long)]
    stdio: bool,
}

pub fn run(_args: Args) -> ExitCode {
    match factory_lsp::run_stdio() {
        Ok(()) => ExitCode::from(OK),
        Err(err) => super::report(
            miette::miette!(
                help = "the editor closed the connection or sent a malformed message; restart the server",
                "{err}"
            ),
            USAGE,
        ),
    }
}
