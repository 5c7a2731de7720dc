//! `factory __confine [--write P]... [--hide P]... [--no-network] --chdir DIR -- CMD...`:
//! the landlock launcher a sandboxed command runs through where bubblewrap cannot
//! (`factory_runtime::placement::landlock`). Not for people: factory composes it.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::placement::landlock::{self, Launch};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    write: Vec<PathBuf>,
    #[arg(long)]
    hide: Vec<PathBuf>,
    #[arg(long)]
    no_network: bool,
    #[arg(long)]
    chdir: PathBuf,
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    let launched = landlock::launch(&Launch {
        write: args.write,
        hide: args.hide,
        no_network: args.no_network,
        chdir: args.chdir,
        command: args.command,
    });
    match launched {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(why) => {
            eprintln!("factory: cannot confine the command: {why}");
            // What a shell says of a command it could not run.
            ExitCode::from(126)
        }
    }
}
