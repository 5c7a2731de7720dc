//! `file://` URIs ↔ the compiler's file keys (absolute paths).

use std::path::Path;
use std::str::FromStr;

use lsp_types::Uri;

/// The database key of a URI: the percent-decoded path of a `file://` URI; any other
/// URI (an unsaved `untitled:` buffer) is its own key, so it is still checked.
pub fn uri_to_key(uri: &Uri) -> Option<String> {
    let s = uri.as_str();
    let Some(rest) = s.strip_prefix("file://") else {
        return Some(s.to_string());
    };
    // `file://host/path` is not a local file; `file:///path` is.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    percent_decode(path)
}

pub fn key_to_uri(key: &str) -> Option<Uri> {
    if !key.starts_with('/') {
        // Not a path: a URI kept as its own key, or a key with no file (`std/x.fwf`).
        return key.contains(':').then(|| Uri::from_str(key).ok()).flatten();
    }
    let mut out = String::from("file://");
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&out).ok()
}

pub fn path_to_uri(path: &Path) -> Option<Uri> {
    key_to_uri(&path.to_string_lossy())
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_paths_with_spaces_and_unicode() {
        let key = "/tmp/my dir/é x.fwf";
        let uri = key_to_uri(key).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/my%20dir/%C3%A9%20x.fwf");
        assert_eq!(uri_to_key(&uri).as_deref(), Some(key));
    }

    #[test]
    fn other_uris_are_their_own_keys() {
        let uri = Uri::from_str("untitled:Untitled-1").unwrap();
        assert_eq!(uri_to_key(&uri).as_deref(), Some("untitled:Untitled-1"));
        assert_eq!(key_to_uri("untitled:Untitled-1"), Some(uri));
        assert_eq!(key_to_uri("std/qa.fwf"), None);
    }
}
