//! Logging through `tracing`, written by a small hand-written subscriber. `MESH_LOG` (or
//! `RUST_LOG`) sets the filter, e.g. `MESH_LOG=debug` or `MESH_LOG=mesh::server=debug,info`;
//! the default is `warn`.
//!
//! Each event becomes one line, `LEVEL target: message key=value …`, on stderr (the daemon's
//! file log also starts each line with a UTC timestamp, see `daemon::log`). mesh-mcp never
//! opens spans, so the subscriber keeps no span state. It replaces `tracing-subscriber`'s `fmt`
//! layer and `Targets` filter: measured when this module replaced them (commit afef062, the
//! stripped release builds before and after), they cost 43 KB of `mesh-mcp` and 62 KB of
//! `meshd` (the README's dependency table quotes the same figure; docs/ARCHITECTURE.md §1).

use std::fmt::Write as _;
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber, span};

/// Which events pass: the most specific (longest) matching target prefix decides, else the
/// default level. The syntax is `tracing-subscriber`'s `Targets`: comma-separated `level` or
/// `target=level` directives (`trace`, `debug`, `info`, `warn`, `error`, `off`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelFilterSpec {
    default: LevelFilter,
    /// `(target prefix, level)`, longest prefix first.
    targets: Vec<(String, LevelFilter)>,
}

impl LevelFilterSpec {
    /// Lets through `level` and above for every target.
    pub fn all(level: LevelFilter) -> LevelFilterSpec {
        LevelFilterSpec {
            default: level,
            targets: Vec::new(),
        }
    }

    /// Parses `spec`; an empty or malformed spec gives `fallback` for every target (as before,
    /// a typo in `MESH_LOG` must not silence errors).
    pub fn parse(spec: &str, fallback: LevelFilter) -> LevelFilterSpec {
        let mut filter = LevelFilterSpec::all(fallback);
        if spec.trim().is_empty() {
            return filter;
        }
        let mut default = None;
        for directive in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let parsed = match directive.split_once('=') {
                Some((target, level)) => parse_level(level).map(|l| (Some(target.trim()), l)),
                None => match parse_level(directive) {
                    Some(l) => Some((None, l)),
                    // A bare target enables everything it logs, like `Targets`.
                    None => Some((Some(directive), LevelFilter::TRACE)),
                },
            };
            match parsed {
                Some((Some(target), level)) => filter.targets.push((target.to_string(), level)),
                Some((None, level)) => default = Some(level),
                None => return LevelFilterSpec::all(fallback),
            }
        }
        // Like `Targets`, directives without a default let nothing else through.
        filter.default = default.unwrap_or(if filter.targets.is_empty() {
            fallback
        } else {
            LevelFilter::OFF
        });
        crate::order::sort_by(&mut filter.targets, |a, b| b.0.len().cmp(&a.0.len()));
        filter
    }

    /// Whether an event of `level` from `target` passes.
    pub fn enabled(&self, target: &str, level: &Level) -> bool {
        let limit = self
            .targets
            .iter()
            .find(|(prefix, _)| target.starts_with(prefix.as_str()))
            .map_or(self.default, |(_, l)| *l);
        limit >= *level
    }

    /// The most verbose level any directive lets through.
    fn max_level(&self) -> LevelFilter {
        self.targets
            .iter()
            .map(|(_, l)| *l)
            .fold(self.default, LevelFilter::max)
    }
}

fn parse_level(word: &str) -> Option<LevelFilter> {
    Some(match word.trim().to_ascii_lowercase().as_str() {
        "trace" => LevelFilter::TRACE,
        "debug" => LevelFilter::DEBUG,
        "info" => LevelFilter::INFO,
        "warn" => LevelFilter::WARN,
        "error" => LevelFilter::ERROR,
        "off" => LevelFilter::OFF,
        _ => return None,
    })
}

/// Where formatted lines go.
pub type LineSink = Box<dyn Fn(&str) + Send + Sync>;

/// A sink writing each line to stderr in one `write_all`.
pub fn stderr_sink() -> LineSink {
    Box::new(|line| {
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    })
}

/// A `tracing` subscriber that formats each event as one line and hands it to every sink
/// whose filter lets it through.
pub struct LineSubscriber {
    outputs: Vec<(LevelFilterSpec, LineSink)>,
}

impl LineSubscriber {
    /// A subscriber writing to `outputs`, each with its own filter.
    pub fn new(outputs: Vec<(LevelFilterSpec, LineSink)>) -> LineSubscriber {
        LineSubscriber { outputs }
    }

    /// Makes this the global subscriber; does nothing when one is already installed.
    pub fn install(self) {
        let _ = tracing::subscriber::set_global_default(self);
    }
}

/// Formats `event` as `LEVEL target: message key=value …` plus a newline.
pub fn format_event(event: &Event<'_>) -> String {
    let meta = event.metadata();
    let mut line = String::with_capacity(128);
    let _ = write!(line, "{} {}: ", meta.level(), meta.target());
    let mut fields = FieldWriter {
        message: String::new(),
        rest: String::new(),
    };
    event.record(&mut fields);
    line.push_str(&fields.message);
    if fields.message.is_empty() {
        line.push_str(fields.rest.trim_start());
    } else {
        line.push_str(&fields.rest);
    }
    line.push('\n');
    line
}

/// Collects the `message` field and the other fields as ` key=value` (values with `Debug`,
/// so strings are quoted, as `tracing-subscriber` prints them).
struct FieldWriter {
    message: String,
    rest: String,
}

impl Visit for FieldWriter {
    /// Floats are written by integer arithmetic (3 decimals): `Debug` for `f64` would link
    /// the float-printing machinery of `core` for this one use.
    fn record_f64(&mut self, field: &Field, value: f64) {
        let text = if value.is_finite() && value.abs() < 1e15 {
            let sign = if value < 0.0 { "-" } else { "" };
            let milli = (value.abs() * 1000.0).round() as u64;
            format!("{sign}{}", crate::render::decimal(milli, 1000, 3))
        } else if value.is_nan() {
            "NaN".to_string()
        } else {
            format!("{}inf", if value < 0.0 { "-" } else { "" })
        };
        self.record_str(field, &text);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.rest, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for LineSubscriber {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if self.enabled(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        self.outputs
            .iter()
            .any(|(filter, _)| filter.enabled(meta.target(), meta.level()))
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        self.outputs
            .iter()
            .map(|(filter, _)| filter.max_level())
            .max()
    }

    fn new_span(&self, _span: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _span: &span::Id, _values: &span::Record<'_>) {}

    fn record_follows_from(&self, _span: &span::Id, _follows: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        let mut line = None;
        for (filter, sink) in &self.outputs {
            if filter.enabled(meta.target(), meta.level()) {
                sink(line.get_or_insert_with(|| format_event(event)));
            }
        }
    }

    fn enter(&self, _span: &span::Id) {}

    fn exit(&self, _span: &span::Id) {}
}

/// The filter `MESH_LOG` (else `RUST_LOG`) asks for, `fallback` when neither is set or valid.
pub fn env_filter(fallback: LevelFilter) -> LevelFilterSpec {
    let spec = std::env::var("MESH_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_default();
    LevelFilterSpec::parse(&spec, fallback)
}

/// Installs the stderr subscriber once; later calls do nothing.
pub fn init() {
    LineSubscriber::new(vec![(env_filter(LevelFilter::WARN), stderr_sink())]).install();
}

/// Routes panic messages through `tracing` (one line with the location) instead of the default
/// hook's stderr dump, so a panicking tool task or extractor leaves a readable log line (see
/// [`crate::isolate::install_hook`]).
pub fn install_panic_hook() {
    crate::isolate::install_hook();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn filter_picks_the_longest_matching_target() {
        let f = LevelFilterSpec::parse("mesh::server=debug, mesh=error ,info", LevelFilter::WARN);
        assert!(f.enabled("mesh::server", &Level::DEBUG));
        assert!(!f.enabled("mesh::server", &Level::TRACE));
        assert!(f.enabled("mesh::cache", &Level::ERROR));
        assert!(!f.enabled("mesh::cache", &Level::WARN));
        assert!(f.enabled("other", &Level::INFO));
        assert!(!f.enabled("other", &Level::DEBUG));
        assert_eq!(f.max_level(), LevelFilter::DEBUG);
    }

    #[test]
    fn filter_defaults_and_bad_specs() {
        let empty = LevelFilterSpec::parse("  ", LevelFilter::WARN);
        assert_eq!(empty, LevelFilterSpec::all(LevelFilter::WARN));
        let bad = LevelFilterSpec::parse("mesh=loud", LevelFilter::INFO);
        assert_eq!(bad, LevelFilterSpec::all(LevelFilter::INFO));
        let only = LevelFilterSpec::parse("mesh::index=debug", LevelFilter::WARN);
        assert!(only.enabled("mesh::index::watch", &Level::DEBUG));
        assert!(!only.enabled("mesh::server", &Level::ERROR));
        let level = LevelFilterSpec::parse("DEBUG", LevelFilter::WARN);
        assert!(level.enabled("anything", &Level::DEBUG));
        let off = LevelFilterSpec::parse("off", LevelFilter::WARN);
        assert!(!off.enabled("anything", &Level::ERROR));
    }

    #[test]
    fn events_become_one_line_per_passing_sink() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = |tag: &'static str| -> LineSink {
            let seen = seen.clone();
            Box::new(move |line| seen.lock().unwrap().push(format!("{tag} {line}")))
        };
        let subscriber = LineSubscriber::new(vec![
            (LevelFilterSpec::all(LevelFilter::INFO), sink("file")),
            (LevelFilterSpec::all(LevelFilter::ERROR), sink("stderr")),
        ]);
        tracing::subscriber::with_default(subscriber, || {
            let path = "/x y";
            tracing::info!(target: "mesh::daemon", path, count = 3, "serves {}", "ws");
            tracing::debug!(target: "mesh::daemon", "hidden");
            tracing::error!(target: "mesh::server", reason = %"boom", "stopped");
            tracing::warn!(target: "mesh::cache", only = true);
        });
        let seen = seen.lock().unwrap();
        assert_eq!(
            *seen,
            [
                "file INFO mesh::daemon: serves ws path=\"/x y\" count=3\n",
                "file ERROR mesh::server: stopped reason=boom\n",
                "stderr ERROR mesh::server: stopped reason=boom\n",
                "file WARN mesh::cache: only=true\n",
            ]
        );
    }
}
