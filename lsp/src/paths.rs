//! `file://` URIs ↔ the compiler's file keys (absolute paths).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The database key of a `file://` URI: its percent-decoded path.
pub fn uri_to_key(uri: &Uri) -> Option<String> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    // `file://host/path` is not a local file; `file:///path` is.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    percent_decode(path)
}

pub fn key_to_uri(key: &str) -> Option<Uri> {
    let mut out = String::from("file://");
    if !key.starts_with('/') {
        out.push('/');
    }
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

pub fn key_path(key: &str) -> PathBuf {
    PathBuf::from(key)
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
    fn rejects_non_file_uris() {
        let uri = Uri::from_str("untitled:Untitled-1").unwrap();
        assert_eq!(uri_to_key(&uri), None);
    }
}
