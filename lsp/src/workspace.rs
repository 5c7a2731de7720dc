//! The `.fwf` files of the workspace: where the resolver looks for the other users of a
//! name that crosses files (the files importing a subgraph, the users of a role). The
//! compiler does no I/O, so the server finds them on disk.

use std::path::Path;

/// Directories never searched: hidden ones (`.git`, `.factory`) and build output.
const SKIPPED: &[&str] = &["target", "node_modules"];
/// How deep below the root, and how many files at most: a root opened at `$HOME` must
/// not make a rename walk the whole disk.
const MAX_DEPTH: usize = 8;
const MAX_FILES: usize = 5000;

/// The keys (absolute paths) of the `.fwf` files under `root`, sorted. Empty when the
/// root is not an absolute path (no workspace folder was given).
pub fn fwf_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if root.is_absolute() {
        walk(root, MAX_DEPTH, &mut out);
    }
    out.sort();
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if out.len() >= MAX_FILES {
            return;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let Ok(kind) = e.file_type() else { continue };
        let path = e.path();
        if kind.is_dir() {
            if depth > 1 && !SKIPPED.contains(&name.as_str()) {
                walk(&path, depth - 1, out);
            }
        } else if name.ends_with(".fwf")
            && let Some(key) = path.to_str()
        {
            out.push(key.to_string());
        }
    }
}
