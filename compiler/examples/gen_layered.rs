//! Prints `testgen::layered_workflow(N)`, the workflow the benches measure, so whole
//! processes (`factory check`, `factory compile`) can be timed on it from a script:
//! `cargo run -p factory-compiler --release --features testgen --example gen_layered -- 10000`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let arg = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "1000".to_string());
    let Ok(nodes) = arg.parse::<usize>() else {
        eprintln!("usage: gen_layered NODES (a whole number, got `{arg}`)");
        return ExitCode::from(2);
    };
    print!("{}", factory_compiler::testgen::layered_workflow(nodes));
    ExitCode::SUCCESS
}
