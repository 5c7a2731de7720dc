//! The modes, standard library and role prompts that ship inside the `factory` binary,
//! so an installed `factory` works in any directory. A project overrides them with
//! `.factory/workflows/<name>.fwf` and `.factory/agents/<role>.md`.

use include_dir::{Dir, include_dir};

static WORKFLOWS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../workflows");
static STDLIB: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../stdlib");
static PROMPTS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../prompts");

fn fwf_files(dir: &'static Dir<'static>) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = dir
        .files()
        .filter(|f| f.path().extension().is_some_and(|e| e == "fwf"))
        .filter_map(|f| Some((f.path().file_stem()?.to_str()?, f.contents_utf8()?)))
        .collect();
    out.sort_unstable();
    out
}

/// Built-in modes as (name, source), sorted by name.
pub fn workflows() -> Vec<(&'static str, &'static str)> {
    fwf_files(&WORKFLOWS)
}

/// The source of built-in mode `name`.
pub fn workflow(name: &str) -> Option<&'static str> {
    workflows()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| t)
}

/// The source of `std/<name>.fwf`.
pub fn stdlib(name: &str) -> Option<&'static str> {
    STDLIB.get_file(format!("{name}.fwf"))?.contents_utf8()
}

/// Every standard library file as (name, source).
pub fn stdlib_files() -> Vec<(&'static str, &'static str)> {
    fwf_files(&STDLIB)
}

/// Built-in role prompts as (role, text), sorted by role.
pub fn prompts() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = PROMPTS
        .files()
        .filter(|f| {
            f.path().extension().is_some_and(|e| e == "md")
                && f.path().file_stem().is_some_and(|s| s != "README")
        })
        .filter_map(|f| Some((f.path().file_stem()?.to_str()?, f.contents_utf8()?)))
        .collect();
    out.sort_unstable();
    out
}

/// The built-in prompt of `role`.
pub fn prompt(role: &str) -> Option<&'static str> {
    PROMPTS.get_file(format!("{role}.md"))?.contents_utf8()
}

/// The built-in default playbook of `role`.
pub fn playbook(role: &str) -> Option<&'static str> {
    PROMPTS
        .get_file(format!("playbooks/{role}.md"))?
        .contents_utf8()
}
