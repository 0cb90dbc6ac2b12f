//! [`verify`]: the replay of the chain, its MACs and its anchor that names the first broken row.

use super::anchor::{read_anchor, read_key};
use super::chain::{ChainFields, row_mac};
use super::read_only::open_read_only;
use super::{AuditError, BreakReason, GENESIS_HASH};
use std::path::Path;
use std::time::Duration;

/// The outcome of a successful [`verify`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyReport {
    /// How many rows the chain holds.
    pub rows: u64,
    /// Rows written before rows carried a MAC (checked by their hash alone), at the start.
    pub legacy_rows: u64,
    /// The newest row the anchor vouches for, when there is an anchor.
    pub anchored: Option<u64>,
    /// Rows after the anchored one (appended by a writer that did not move the anchor, i.e. an
    /// older mesh-mcp); their links and MACs verify, but their removal would not be noticed.
    pub past_anchor: u64,
}

/// Replays the chain at `path` (opened read-only, creating nothing beside it) in sequence
/// order and checks every link: sequence numbers without gaps from 0, each `prev_hash` equal to
/// the previous row's hash, each stored hash equal to the recomputed one, each MAC (for keyed
/// rows) equal to the one computed with the key; then the anchor: present whenever rows carry
/// MACs, its own MAC valid, and the chain reaching the row it names with the hash it recorded.
/// Returns [`AuditError::BrokenChain`] naming the first row that fails (for a truncation, the
/// first missing row).
///
/// A writer that has moved the anchor but not yet committed looks like a truncation by one
/// row for a moment, so a truncation verdict is re-checked a few times before it stands.
pub fn verify(path: &Path) -> Result<VerifyReport, AuditError> {
    let mut attempt = 0;
    loop {
        match verify_once(path) {
            Err(AuditError::BrokenChain {
                reason: BreakReason::Truncated { .. } | BreakReason::AnchorInvalid(_),
                ..
            }) if attempt < 5 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn verify_once(path: &Path) -> Result<VerifyReport, AuditError> {
    let db = open_read_only(path)?;
    let conn = &db.conn;
    let sql_err = |action| AuditError::sqlite(path, action);
    let key = read_key(path)?;
    // The anchor is read before the rows: an append racing with this read then shows up as a
    // row past the anchor (harmless), not as a truncation.
    let anchor = read_anchor(path, key.as_ref());
    let anchored_seq = anchor.as_ref().ok().and_then(|a| a.as_ref().map(|a| a.seq));
    let mut anchored_hash: Option<String> = None;
    let has_mac = conn
        .prepare("SELECT entry_mac FROM audit_entries LIMIT 0")
        .is_ok();
    let sql = if has_mac {
        "SELECT entry_seq, prev_hash, timestamp, session_id, trace_id, tool, args_digest,
                status, files_accessed, redactions, entry_hash, entry_mac
         FROM audit_entries ORDER BY entry_seq"
    } else {
        "SELECT entry_seq, prev_hash, timestamp, session_id, trace_id, tool, args_digest,
                status, files_accessed, redactions, entry_hash, NULL
         FROM audit_entries ORDER BY entry_seq"
    };
    let mut st = conn.prepare(sql).map_err(sql_err("read the chain"))?;
    let mut rows = st.query([]).map_err(sql_err("read the chain"))?;
    let mut expected: u64 = 0;
    let mut prev_hash = GENESIS_HASH.to_string();
    let mut legacy_rows = 0u64;
    let mut keyed = false;
    while let Some(r) = rows.next().map_err(sql_err("read the chain"))? {
        let read = |r: &rusqlite::Row<'_>| -> rusqlite::Result<_> {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, String>(8)?,
                r.get::<_, i64>(9)?,
                r.get::<_, String>(10)?,
                r.get::<_, Option<String>>(11)?,
            ))
        };
        let (seq, prev, ts, session, trace, tool, digest, status, files, redactions, hash, mac) =
            read(r).map_err(sql_err("read a chain row"))?;
        // A negative seq cannot come from `record`; report it as out of sequence at row 0.
        let seq_u = u64::try_from(seq).unwrap_or(0);
        let broken = |reason| AuditError::BrokenChain { seq: seq_u, reason };
        if seq < 0 || seq_u != expected {
            return Err(broken(BreakReason::SequenceGap { expected }));
        }
        if prev != prev_hash {
            return Err(broken(BreakReason::PrevHashMismatch {
                prev_seq: expected.checked_sub(1),
            }));
        }
        let fields = ChainFields {
            prev_hash: &prev,
            timestamp: &ts,
            session_id: &session,
            trace_id: trace.as_deref(),
            tool: &tool,
            args_digest: &digest,
            status: &status,
            files_json: &files,
            redactions,
        };
        if let Some(field) = fields.field_with_separator() {
            return Err(broken(BreakReason::SeparatorInField { field }));
        }
        match &mac {
            Some(mac) => {
                keyed = true;
                if fields.hash_v2() != hash {
                    return Err(broken(BreakReason::HashMismatch));
                }
                let Some(key) = &key else {
                    return Err(broken(BreakReason::KeyMissing));
                };
                if row_mac(key, seq_u, &hash) != *mac {
                    return Err(broken(BreakReason::MacMismatch));
                }
            }
            None if keyed => return Err(broken(BreakReason::MacMissing)),
            None => {
                if fields.hash_v1() != hash {
                    return Err(broken(BreakReason::HashMismatch));
                }
                legacy_rows += 1;
            }
        }
        if anchored_seq == Some(seq_u) {
            anchored_hash = Some(hash.clone());
        }
        prev_hash = hash;
        expected += 1;
    }
    let rows_seen = expected;
    let at_end = |reason| AuditError::BrokenChain {
        seq: rows_seen,
        reason,
    };
    let anchor = anchor.map_err(|why| at_end(BreakReason::AnchorInvalid(why)))?;
    let (anchored, past_anchor) = match anchor {
        None if keyed => return Err(at_end(BreakReason::AnchorMissing)),
        None => (None, 0),
        Some(_) if key.is_none() => return Err(at_end(BreakReason::KeyMissing)),
        Some(a) => {
            if a.seq >= rows_seen {
                return Err(at_end(BreakReason::Truncated { anchored: a.seq }));
            }
            if anchored_hash.as_ref() != Some(&a.hash) {
                return Err(AuditError::BrokenChain {
                    seq: a.seq,
                    reason: BreakReason::AnchorMismatch,
                });
            }
            // Keyed rows start right after the legacy prefix; an anchor covering less was
            // made again after the first one went missing.
            if a.since > legacy_rows {
                return Err(AuditError::BrokenChain {
                    seq: a.since,
                    reason: BreakReason::AnchorRemade,
                });
            }
            (Some(a.seq), rows_seen - a.seq - 1)
        }
    };
    tracing::debug!(target: "mesh::audit", rows = rows_seen, path = %path.display(), "audit chain verified");
    Ok(VerifyReport {
        rows: rows_seen,
        legacy_rows,
        anchored,
        past_anchor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::tests::temp_dir;
    use rusqlite::Connection;

    #[test]
    fn verify_reports_missing_and_foreign_files() {
        let dir = temp_dir("missing");
        let path = dir.join("nope.db");
        assert!(matches!(verify(&path), Err(AuditError::NotFound { .. })));
        std::fs::create_dir_all(&dir).expect("dir");
        let other = dir.join("other.db");
        Connection::open(&other)
            .and_then(|c| c.execute_batch("CREATE TABLE t(x)"))
            .expect("foreign db");
        let err = verify(&other).expect_err("not an audit db");
        assert!(matches!(err, AuditError::NotAnAuditDb { .. }));
        assert!(err.to_string().contains("audit_entries"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
