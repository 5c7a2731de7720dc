//! Lexical path normalisation: the one rule for when two spellings name one file, used
//! for import keys and for artifact identity.

/// Removes `.` and empty components and resolves `..` lexically (keeping leading `..` of
/// relative paths; `..` above `/` is `/`). A trailing `/` goes.
pub fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}
