//! The arithmetic of the chain (docs/ARCHITECTURE.md §5): the fields a row's hash covers
//! (`hash_v1`, `hash_v2`), SHA-256 and HMAC-SHA256, the per-row MAC, and the cleaning of fields
//! that would blur the hash's field boundaries.

use super::anchor::Key;
use super::{FIELD_SEP, to_hex};
use sha2::{Digest, Sha256};

/// The exact fields the chain covers, as stored.
pub(super) struct ChainFields<'a> {
    pub(super) prev_hash: &'a str,
    pub(super) timestamp: &'a str,
    pub(super) session_id: &'a str,
    pub(super) trace_id: Option<&'a str>,
    pub(super) tool: &'a str,
    pub(super) args_digest: &'a str,
    pub(super) status: &'a str,
    pub(super) files_json: &'a str,
    pub(super) redactions: i64,
}

impl ChainFields<'_> {
    /// The legacy (keyless) row hash: hex SHA-256 over the fields joined by the unit separator,
    /// a missing trace id hashed as an empty one. Rows without a MAC verify by this.
    pub(super) fn hash_v1(&self) -> String {
        self.hash_with(None, self.trace_id.unwrap_or(""))
    }

    /// The row hash of keyed rows: a version tag first, and the trace id tagged so that NULL
    /// (`-`) and an empty string (`=`) hash differently.
    pub(super) fn hash_v2(&self) -> String {
        let trace = match self.trace_id {
            None => "-".to_string(),
            Some(t) => format!("={t}"),
        };
        self.hash_with(Some("mesh-audit-v2"), &trace)
    }

    /// The SHA-256 of the fields in chain order, `tag` (when given) first and `trace` standing
    /// for the trace id: the one field list both hash versions share.
    fn hash_with(&self, tag: Option<&str>, trace: &str) -> String {
        let redactions = self.redactions.to_string();
        let fields = [
            self.prev_hash,
            self.timestamp,
            self.session_id,
            trace,
            self.tool,
            self.args_digest,
            self.status,
            self.files_json,
            &redactions,
        ];
        let parts: Vec<&str> = tag.into_iter().chain(fields).collect();
        sha256_joined(&parts)
    }

    /// The first free-text column holding the separator, if any (fixed-format columns are
    /// checked too: a separator anywhere would make boundaries ambiguous).
    pub(super) fn field_with_separator(&self) -> Option<&'static str> {
        [
            ("prev_hash", self.prev_hash),
            ("timestamp", self.timestamp),
            ("session_id", self.session_id),
            ("trace_id", self.trace_id.unwrap_or("")),
            ("tool", self.tool),
            ("args_digest", self.args_digest),
            ("status", self.status),
            ("files_accessed", self.files_json),
        ]
        .into_iter()
        .find(|(_, v)| v.contains(FIELD_SEP))
        .map(|(name, _)| name)
    }
}

/// Hex SHA-256 over `parts` joined by the unit separator.
fn sha256_joined(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([FIELD_SEP as u8]);
        }
        h.update(p.as_bytes());
    }
    to_hex(&h.finalize())
}

/// HMAC-SHA256 (RFC 2104) of `parts` joined by the unit separator, as lower-case hex.
pub(super) fn hmac_hex(key: &[u8], parts: &[&str]) -> String {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            inner.update([FIELD_SEP as u8]);
        }
        inner.update(p.as_bytes());
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    to_hex(&outer.finalize())
}

/// The MAC stored with a keyed row.
pub(super) fn row_mac(key: &Key, seq: u64, entry_hash: &str) -> String {
    hmac_hex(&key.0, &["row", &seq.to_string(), entry_hash])
}

/// Replaces the unit separator (which would blur field boundaries in the hash) with U+FFFD, so
/// a hostile session or trace id is still audited rather than refused.
pub(super) fn clean_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(FIELD_SEP) {
        std::borrow::Cow::Owned(s.replace(FIELD_SEP, "\u{fffd}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::GENESIS_HASH;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231 (HMAC-SHA256).
        assert_eq!(
            hmac_hex(b"Jefe", &["what do ya want for nothing?"]),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        assert_eq!(
            hmac_hex(
                &[0xaa; 131],
                &["Test Using Larger Than Block-Size Key - Hash Key First"]
            ),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn null_and_empty_trace_ids_hash_apart() {
        let fields = |trace| ChainFields {
            prev_hash: GENESIS_HASH,
            timestamp: "t",
            session_id: "s",
            trace_id: trace,
            tool: "x",
            args_digest: "d",
            status: "SUCCESS",
            files_json: "[]",
            redactions: 0,
        };
        assert_ne!(fields(None).hash_v2(), fields(Some("")).hash_v2());
        // The legacy formula could not tell them apart; keyed rows no longer use it.
        assert_eq!(fields(None).hash_v1(), fields(Some("")).hash_v1());
    }
}
