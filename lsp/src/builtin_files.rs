//! Read-only copies of the files embedded in factory (the standard library, the role
//! prompts), so "go to definition" can open them: an editor needs a file on disk.

use std::path::PathBuf;

/// Where the copies live: one directory per build of factory, so a newer binary never
/// shows an older copy.
fn cache_dir() -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    factory_compiler::builtin::stdlib_files().hash(&mut h);
    factory_compiler::builtin::prompts().hash(&mut h);
    std::env::temp_dir().join(format!("factory-builtin-{:016x}", h.finish()))
}

/// Writes `text` to `rel` under the cache (once), read-only, and returns its path. The
/// copy is read-only so an editor refuses to save changes that would be lost (the
/// binary's embedded text is what factory uses).
fn materialize(rel: &str, text: &str) -> Option<PathBuf> {
    let path = cache_dir().join(rel);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
        std::fs::create_dir_all(path.parent()?).ok()?;
        let tmp = path.with_extension("tmp");
        // A leftover read-only temporary from an interrupted run would fail the write.
        let _ = std::fs::remove_file(&tmp);
        std::fs::write(&tmp, text).ok()?;
        read_only(&tmp)?;
        std::fs::rename(&tmp, &path).ok()?;
    } else if !std::fs::metadata(&path).ok()?.permissions().readonly() {
        // A copy written by an older factory that left it writable.
        read_only(&path)?;
    }
    Some(path)
}

fn read_only(path: &std::path::Path) -> Option<()> {
    let mut perms = std::fs::metadata(path).ok()?.permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(path, perms).ok()
}

/// A file for `std/<name>.fwf` from the embedded standard library.
pub fn stdlib_file(name: &str) -> Option<PathBuf> {
    let text = factory_compiler::builtin::stdlib(name)?;
    materialize(&format!("stdlib/{name}.fwf"), text)
}

/// A file for the built-in prompt of `role`.
pub fn prompt_file(role: &str) -> Option<PathBuf> {
    let text = factory_compiler::builtin::prompt(role)?;
    materialize(&format!("prompts/{role}.md"), text)
}
