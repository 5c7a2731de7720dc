//! The lexical rules of `.fwf` every room shares: what an identifier is.

/// A `.fwf` identifier: a letter or `_`, then letters, digits and `_`.
pub fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
