//! [`read_stats`]: what `mesh-mcp stats` shows (calls, errors, latency percentiles, sessions
//! and the most-returned files) over a time window.

use super::read_only::{has_table, open_read_only};
use super::{AuditError, CallStatus, P95_MIN_SAMPLES, TOP_FILES, iso8601_utc_ms, unix_ms};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

/// Per-tool figures in a [`Stats`] summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolStats {
    /// The tool name.
    pub tool: String,
    /// Audited calls in the window.
    pub calls: u64,
    /// Calls whose status is not `SUCCESS` (the `isError` count).
    pub errors: u64,
    /// Calls with a latency row.
    pub timed: u64,
    /// Median latency in microseconds (nearest rank), when any call was timed.
    pub p50_us: Option<u64>,
    /// 95th percentile latency in microseconds (nearest rank), only from [`P95_MIN_SAMPLES`]
    /// timed calls.
    pub p95_us: Option<u64>,
}

/// One client session in a [`Stats`] summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionStats {
    /// The session id.
    pub session_id: String,
    /// Audited calls of this session in the window.
    pub calls: u64,
    /// Timestamp of its first call in the window.
    pub first: String,
    /// Timestamp of its last call in the window.
    pub last: String,
}

/// How often a file appeared in `files_accessed` within the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileCount {
    /// The path as recorded.
    pub path: String,
    /// Number of audited answers that returned it.
    pub count: u64,
}

/// What `mesh-mcp stats` shows, computed from the rows inside a time window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Audited calls in the window.
    pub calls: u64,
    /// Calls whose status is not `SUCCESS`.
    pub errors: u64,
    /// Whether the database has a latency table at all (older files may not); when false,
    /// latencies are "not recorded" rather than zero.
    pub latency_recorded: bool,
    /// Per-tool figures, most-called first.
    pub tools: Vec<ToolStats>,
    /// Sessions seen in the window, by first call.
    pub sessions: Vec<SessionStats>,
    /// The [`TOP_FILES`] most returned files, most frequent first.
    pub top_files: Vec<FileCount>,
    /// Calls in the window left out because they were answered for another workspace (or
    /// recorded before rows named their workspace); 0 when every workspace is shown.
    pub other_workspaces: u64,
}

/// Nearest-rank percentile of an ascending slice: the value at 1-based rank `ceil(p·n/100)`,
/// no interpolation. `None` for an empty slice.
pub fn percentile_nearest_rank(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as u64;
    let rank = (u64::from(p) * n).div_ceil(100).clamp(1, n);
    sorted.get(usize::try_from(rank - 1).ok()?).copied()
}

/// Reads the summary shown by `mesh-mcp stats` from the database at `path` (read-only),
/// counting only rows at or after `since` (all rows when `None`) and, when `workspace` is given,
/// only calls answered for that workspace directory (the others are counted in
/// [`Stats::other_workspaces`]).
pub fn read_stats(
    path: &Path,
    since: Option<SystemTime>,
    workspace: Option<&str>,
) -> Result<Stats, AuditError> {
    let db = open_read_only(path)?;
    let conn = &db.conn;
    let sql_err = |action| AuditError::sqlite(path, action);
    let latency_recorded =
        has_table(conn, "tool_call_metrics").map_err(sql_err("read the schema"))?;
    let workspace_recorded =
        has_table(conn, "tool_call_workspace").map_err(sql_err("read the schema"))?;
    let cutoff = since
        .map(|t| iso8601_utc_ms(unix_ms(t)))
        .unwrap_or_default();
    let sql = rows_sql(latency_recorded, workspace_recorded);
    let mut st = conn.prepare(&sql).map_err(sql_err("read audit rows"))?;
    let mut rows = st.query([&cutoff]).map_err(sql_err("read audit rows"))?;

    let mut stats = Stats {
        latency_recorded,
        ..Stats::default()
    };
    let mut tools: HashMap<String, ToolAcc> = HashMap::new();
    let mut sessions: HashMap<String, SessionStats> = HashMap::new();
    let mut files: HashMap<String, u64> = HashMap::new();
    while let Some(r) = rows.next().map_err(sql_err("read audit rows"))? {
        let read = |r: &rusqlite::Row<'_>| -> rusqlite::Result<_> {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, Option<String>>(6)?,
            ))
        };
        let (tool, status, session, ts, files_json, duration, row_workspace) =
            read(r).map_err(sql_err("read an audit row"))?;
        if let Some(wanted) = workspace
            && row_workspace.as_deref() != Some(wanted)
        {
            stats.other_workspaces += 1;
            continue;
        }
        let is_error = status != CallStatus::Success.as_str();
        stats.calls += 1;
        stats.errors += u64::from(is_error);
        let acc = tools.entry(tool).or_insert(ToolAcc {
            calls: 0,
            errors: 0,
            durations: Vec::new(),
        });
        acc.calls += 1;
        acc.errors += u64::from(is_error);
        if let Some(d) = duration {
            acc.durations.push(u64::try_from(d).unwrap_or(0));
        }
        sessions
            .entry(session.clone())
            .and_modify(|s| {
                s.calls += 1;
                if ts < s.first {
                    s.first = ts.clone();
                }
                if ts > s.last {
                    s.last = ts.clone();
                }
            })
            .or_insert_with(|| SessionStats {
                session_id: session,
                calls: 1,
                first: ts.clone(),
                last: ts.clone(),
            });
        match serde_json::from_str::<Vec<String>>(&files_json) {
            Ok(list) => {
                for f in list {
                    *files.entry(f).or_insert(0) += 1;
                }
            }
            Err(e) => {
                tracing::warn!(target: "mesh::audit", error = %e, "files_accessed is not a JSON list of strings; skipped")
            }
        }
    }

    stats.tools = tool_figures(tools);
    crate::order::sort_by(&mut stats.tools, |a, b| {
        b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool))
    });
    stats.sessions = sessions.into_values().collect();
    crate::order::sort_by(&mut stats.sessions, |a, b| {
        a.first
            .cmp(&b.first)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    let mut top: Vec<FileCount> = files
        .into_iter()
        .map(|(path, count)| FileCount { path, count })
        .collect();
    crate::order::sort_by(&mut top, |a, b| {
        b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path))
    });
    top.truncate(TOP_FILES);
    stats.top_files = top;
    Ok(stats)
}

/// One tool's counts while [`read_stats`] reads the rows.
struct ToolAcc {
    calls: u64,
    errors: u64,
    durations: Vec<u64>,
}

/// The query [`read_stats`] runs: every row from `?1` on, with its latency and workspace when
/// the database has those tables (`NULL` when not).
fn rows_sql(latency_recorded: bool, workspace_recorded: bool) -> String {
    format!(
        "SELECT a.tool, a.status, a.session_id, a.timestamp, a.files_accessed, {}, {}
         FROM audit_entries a{}{} WHERE a.timestamp >= ?1 ORDER BY a.entry_seq",
        if latency_recorded {
            "m.duration_us"
        } else {
            "NULL"
        },
        if workspace_recorded {
            "w.workspace"
        } else {
            "NULL"
        },
        if latency_recorded {
            " LEFT JOIN tool_call_metrics m ON m.entry_seq = a.entry_seq"
        } else {
            ""
        },
        if workspace_recorded {
            " LEFT JOIN tool_call_workspace w ON w.entry_seq = a.entry_seq"
        } else {
            ""
        },
    )
}

/// Per-tool figures from the counts (percentiles over the sorted durations; p95 only from
/// [`P95_MIN_SAMPLES`] timed calls), in no particular order.
fn tool_figures(tools: HashMap<String, ToolAcc>) -> Vec<ToolStats> {
    tools
        .into_iter()
        .map(|(tool, mut acc)| {
            crate::order::sort(&mut acc.durations);
            let p95_us = if acc.durations.len() >= P95_MIN_SAMPLES {
                percentile_nearest_rank(&acc.durations, 95)
            } else {
                None
            };
            ToolStats {
                tool,
                calls: acc.calls,
                errors: acc.errors,
                timed: acc.durations.len() as u64,
                p50_us: percentile_nearest_rank(&acc.durations, 50),
                p95_us,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::tests::{entry, temp_dir};
    use crate::audit::{AuditLog, verify};
    use std::time::Duration;

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(percentile_nearest_rank(&[], 50), None);
        assert_eq!(percentile_nearest_rank(&[7], 95), Some(7));
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!(percentile_nearest_rank(&v, 50), Some(10));
        assert_eq!(percentile_nearest_rank(&v, 95), Some(19));
        assert_eq!(percentile_nearest_rank(&v, 100), Some(20));
        assert_eq!(percentile_nearest_rank(&[1, 2, 3], 50), Some(2));
    }
    #[test]
    fn stats_count_calls_errors_latency_sessions_and_files() {
        let dir = temp_dir("stats");
        let path = dir.join("audit.db");
        let log = AuditLog::open(&path).expect("open");
        for i in 1..=20u64 {
            let status = if i % 5 == 0 {
                CallStatus::Error
            } else {
                CallStatus::Success
            };
            log.record(&entry("smart_search", status, &["a.rs", "b.rs"], i * 100))
                .expect("record");
        }
        let mut e = entry("find_dependents", CallStatus::Refused, &["b.rs"], 7);
        e.session_id = "s2".into();
        log.record(&e).expect("record");

        let s = read_stats(&path, None, None).expect("stats");
        assert_eq!(s.calls, 21);
        assert_eq!(s.errors, 5);
        assert!(s.latency_recorded);
        assert_eq!(s.tools[0].tool, "smart_search");
        assert_eq!(s.tools[0].calls, 20);
        assert_eq!(s.tools[0].errors, 4);
        assert_eq!(s.tools[0].timed, 20);
        assert_eq!(s.tools[0].p50_us, Some(1000));
        assert_eq!(s.tools[0].p95_us, Some(1900));
        assert_eq!(s.tools[1].tool, "find_dependents");
        assert_eq!(s.tools[1].p50_us, Some(7));
        assert_eq!(
            s.tools[1].p95_us, None,
            "p95 needs {P95_MIN_SAMPLES} samples"
        );
        assert_eq!(s.sessions.len(), 2);
        assert_eq!(s.sessions[0].session_id, "s1");
        assert_eq!(s.sessions[0].calls, 20);
        assert!(s.sessions[0].first <= s.sessions[0].last);
        assert_eq!(
            s.top_files,
            vec![
                FileCount {
                    path: "b.rs".into(),
                    count: 21
                },
                FileCount {
                    path: "a.rs".into(),
                    count: 20
                },
            ]
        );

        let future = SystemTime::now() + Duration::from_secs(3600);
        assert_eq!(
            read_stats(&path, Some(future), None).expect("stats").calls,
            0
        );
        let past = SystemTime::now() - Duration::from_secs(3600);
        assert_eq!(
            read_stats(&path, Some(past), None).expect("stats").calls,
            21
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn stats_show_one_workspace_and_count_the_others() {
        let dir = temp_dir("stats-ws");
        let path = dir.join("audit.db");
        // Rows from before rows named their workspace, then two workspaces sharing the file.
        let legacy = AuditLog::open(&path).expect("open");
        legacy
            .record(&entry("smart_search", CallStatus::Success, &[], 1))
            .expect("record");
        drop(legacy);
        let a = AuditLog::open(&path)
            .expect("open")
            .with_workspace(Path::new("/ws/a"));
        let b = AuditLog::open(&path)
            .expect("open")
            .with_workspace(Path::new("/ws/b"));
        for _ in 0..3 {
            a.record(&entry("analyze_grpc", CallStatus::Success, &["a.go"], 5))
                .expect("record");
        }
        b.record(&entry("search_docs", CallStatus::Error, &["b.md"], 9))
            .expect("record");
        let only_a = read_stats(&path, None, Some("/ws/a")).expect("stats");
        assert_eq!(only_a.calls, 3);
        assert_eq!(only_a.errors, 0);
        assert_eq!(only_a.other_workspaces, 2, "b's call and the legacy row");
        assert_eq!(only_a.tools.len(), 1);
        assert_eq!(only_a.top_files[0].path, "a.go");
        let only_b = read_stats(&path, None, Some("/ws/b")).expect("stats");
        assert_eq!(
            (only_b.calls, only_b.errors, only_b.other_workspaces),
            (1, 1, 4)
        );
        let all = read_stats(&path, None, None).expect("stats");
        assert_eq!((all.calls, all.other_workspaces), (5, 0));
        verify(&path).expect("the workspace table is outside the chain");
        let _ = std::fs::remove_dir_all(dir);
    }
}
