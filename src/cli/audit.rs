//! `mesh-mcp audit verify`: replay the audit hash chain and name the first broken row.
//!
//! Exit status: 0 when the chain verifies, 1 when it is broken or the database cannot be read,
//! 2 for a usage error. Everything is reported on stderr.

use std::fmt;
use std::path::PathBuf;

use crate::audit::{AuditError, AuditLog, verify};

/// The text printed by `mesh-mcp audit --help`.
pub const USAGE: &str = "\
mesh-mcp audit — check the tamper-evident audit trail of tool calls

Usage: mesh-mcp audit verify [--db PATH]

Commands:
  verify        replay the SHA-256 hash chain in sequence order, check each row's MAC
                (key in <db>.key) and the anchored head (<db>.head); exit 0 when all
                verifies, 1 naming the first broken row (edited, forged, inserted,
                deleted, or cut off the end)

Options:
  --db PATH     the audit database (default: $MESH_AUDIT_DB, else ~/.cache/mesh-mcp/audit.db)
  -h, --help    print this help

The database is opened read-only and no file is created beside it; nothing is changed and
nothing leaves the machine.

Example: mesh-mcp audit verify
";

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Help,
    Verify { db: Option<PathBuf> },
}

/// A command line we cannot act on.
#[derive(Debug, PartialEq, Eq)]
enum UsageError {
    /// No subcommand after `audit`.
    MissingCommand,
    /// A subcommand we do not know.
    UnknownCommand(String),
    /// A flag we do not know.
    UnknownFlag(String),
    /// A flag that needs a value came last.
    MissingValue(&'static str),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::MissingCommand => {
                f.write_str("missing command; try `mesh-mcp audit verify`")
            }
            UsageError::UnknownCommand(c) => {
                write!(f, "unknown command `{c}`; the only one is `verify`")
            }
            UsageError::UnknownFlag(a) => write!(f, "unknown option `{a}`"),
            UsageError::MissingValue(flag) => {
                write!(f, "`{flag}` needs a value, e.g. `{flag} ./audit.db`")
            }
        }
    }
}

impl std::error::Error for UsageError {}

fn parse(args: &[String]) -> Result<Command, UsageError> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        return Ok(Command::Help);
    }
    let (cmd, rest) = args.split_first().ok_or(UsageError::MissingCommand)?;
    if cmd != "verify" {
        return Err(UsageError::UnknownCommand(cmd.clone()));
    }
    let mut db = None;
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if a == "--db" {
            let v = it.next().ok_or(UsageError::MissingValue("--db"))?;
            db = Some(PathBuf::from(v));
        } else if let Some(v) = a.strip_prefix("--db=") {
            if v.is_empty() {
                return Err(UsageError::MissingValue("--db"));
            }
            db = Some(PathBuf::from(v));
        } else {
            return Err(UsageError::UnknownFlag(a.clone()));
        }
    }
    Ok(Command::Verify { db })
}

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    crate::logging::init();
    match parse(args) {
        Ok(Command::Help) => super::print_stdout(USAGE),
        Ok(Command::Verify { db }) => {
            let path = db.unwrap_or_else(AuditLog::default_path);
            match verify(&path) {
                Ok(report) => {
                    let anchor = match report.anchored {
                        Some(seq) if report.past_anchor > 0 => format!(
                            "; anchored at row {seq}, {} later rows not covered by the anchor",
                            report.past_anchor
                        ),
                        Some(seq) => format!("; head anchored at row {seq}, MACs checked"),
                        None => "; no anchor (legacy trail: truncation would not be noticed)"
                            .to_string(),
                    };
                    let legacy = if report.legacy_rows > 0 {
                        format!(", {} legacy rows without a MAC", report.legacy_rows)
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "audit chain OK: {} rows{legacy}{anchor} ({})",
                        report.rows,
                        path.display()
                    );
                    0
                }
                Err(e @ AuditError::BrokenChain { .. }) => {
                    eprintln!("mesh-mcp audit verify: {e} ({})", path.display());
                    1
                }
                Err(e) => {
                    eprintln!("mesh-mcp audit verify: {e}");
                    1
                }
            }
        }
        Err(e) => {
            eprintln!("mesh-mcp audit: {e}. Run `mesh-mcp audit --help` for usage.");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_support::args;

    #[test]
    fn parses_verify_with_and_without_db() {
        assert_eq!(parse(&args(&["verify"])), Ok(Command::Verify { db: None }));
        assert_eq!(
            parse(&args(&["verify", "--db", "x.db"])),
            Ok(Command::Verify {
                db: Some("x.db".into())
            })
        );
        assert_eq!(
            parse(&args(&["verify", "--db=y.db"])),
            Ok(Command::Verify {
                db: Some("y.db".into())
            })
        );
    }

    #[test]
    fn usage_errors_are_named() {
        assert_eq!(parse(&args(&[])), Err(UsageError::MissingCommand));
        assert_eq!(
            parse(&args(&["check"])),
            Err(UsageError::UnknownCommand("check".into()))
        );
        assert_eq!(
            parse(&args(&["verify", "--db"])),
            Err(UsageError::MissingValue("--db"))
        );
        assert_eq!(
            parse(&args(&["verify", "--json"])),
            Err(UsageError::UnknownFlag("--json".into()))
        );
        assert_eq!(parse(&args(&["--help"])), Ok(Command::Help));
        assert_eq!(parse(&args(&["verify", "-h"])), Ok(Command::Help));
    }
}
