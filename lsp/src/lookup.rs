//! The compiler resolver's results as the server hands them out: file keys become URIs
//! (a standard library file is shown from disk), byte ranges become LSP ranges, and a
//! role's definition is its prompt file. Name resolution itself is
//! `factory_compiler::resolve`.

// The quick fixes' names for the resolver's helpers.
pub use factory_compiler::ide::line_start;
pub use factory_compiler::lexical::is_ident;
pub use factory_compiler::resolve::scope::{decl_at, node_decl_span};

use std::path::{Path, PathBuf};

use factory_compiler::db::Db;
use factory_compiler::resolve;
use lsp_types::{Location, Position, Range};

use crate::paths::{key_to_uri, path_to_uri};
use crate::position::LineIndex;
use crate::world::World;

/// A resolver location as an LSP location, when its file is on disk.
pub fn location(world: &World, loc: &resolve::Location) -> Option<Location> {
    let uri = key_to_uri(&disk_key(world, &loc.file)?)?;
    let text = world.db.file(&loc.file).text(&world.db);
    Some(Location::new(uri, LineIndex::new(text).range(&loc.span)))
}

/// The start of the prompt file of `role` for a file at `key`: the project's
/// (`prompts/<role>.md`, `.factory/agents/<role>.md`) or the built-in one.
pub fn role_location(key: &str, role: &str) -> Option<Location> {
    let path = prompt_path(key, role).or_else(|| crate::builtin_files::prompt_file(role))?;
    let start = Range::new(Position::new(0, 0), Position::new(0, 0));
    Some(Location::new(path_to_uri(&path)?, start))
}

/// The key of a file that is on disk. The standard library is the project's directory
/// (`$FACTORY_STDLIB` or a `stdlib/` above the workspace), or else a read-only copy of
/// the embedded one.
pub fn disk_key(world: &World, key: &str) -> Option<String> {
    if !world.db.file(key).exists(&world.db) {
        return None;
    }
    if let Some(rest) = key.strip_prefix("std/") {
        let path = match world.stdlib_dir().map(|dir| dir.join(rest)) {
            Some(path) if path.is_file() => path,
            _ => crate::builtin_files::stdlib_file(rest.strip_suffix(".fwf")?)?,
        };
        return Some(path.to_string_lossy().into_owned());
    }
    key.starts_with('/').then(|| key.to_string())
}

/// The prompt file of `role` for a file at `key`: the first in the directories
/// `factory agent` reads (`factory_compiler::host::prompt_dirs`).
pub fn prompt_path(key: &str, role: &str) -> Option<PathBuf> {
    let dir = Path::new(key).parent()?;
    factory_compiler::host::prompt_dirs(dir, factory_compiler::host::factory_home().as_deref())
        .into_iter()
        .map(|d| d.join(format!("{role}.md")))
        .find(|p| p.is_file())
}
