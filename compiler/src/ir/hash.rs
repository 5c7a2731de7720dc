//! A content hash of an IR: the same graph gives the same hash whatever text, spans or
//! comments it came from, because it is the hash of the canonical text.

use sha2::{Digest, Sha256};

use crate::ir::Ir;
use crate::ir::text::to_text;

/// Lowercase hex SHA-256 of the canonical text form of `ir`.
pub fn content_hash(ir: &Ir) -> String {
    let digest = Sha256::digest(to_text(ir).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
