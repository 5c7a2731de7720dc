//! Rebuild when the embedded modes, standard library or prompts change: `include_dir!`
//! does not tell cargo which files it read.
fn main() {
    for dir in ["../workflows", "../stdlib", "../prompts"] {
        println!("cargo:rerun-if-changed={dir}");
    }
}
