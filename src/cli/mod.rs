//! The `mesh-mcp` command line: one file per subcommand. Messages and reports go to stderr;
//! what a command is run for goes to stdout — `--help` and `--version` (exit 0), the answers
//! of `graph`, `query`, `impact` and `--json`, the transcript of `demo` — and `run` hands
//! stdout to the framing writer. Escape codes only on a terminal without `NO_COLOR`.

pub mod audit;
pub mod demo;
pub mod doctor;
pub mod graph;
pub mod impact;
pub mod init;
pub mod query;
pub mod run;
pub mod stats;

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
mesh-mcp — a structural map of your microservice workspace, over MCP

Usage: mesh-mcp [COMMAND] [OPTIONS]

Commands:
  run [--standalone]     serve MCP over stdio (the default when no command is given)
  demo [WORKSPACE]       index the bundled example and run a scripted session
  query <tool> [JSON]    answer one tool call on stdout (--json for the raw MCP result)
  graph [--format F]     the topology as mermaid, json or html, or the index fingerprint
  impact [--base REF] [--format markdown|json] [--fail-on breaking]
                         what the branch changes and breaks, for CI (no daemon)
  doctor [--json] [--fix] check the setup: config, roots, index health, daemon, audit, cache
  init [--write-ide-config] [--force]
                         write .agents/mesh-mcp.toml; register the server with your IDEs
  audit verify           replay the audit hash chain and name the first broken row
  stats [--since 7d] [--workspace DIR | --all-workspaces] [--json]
                         summarise audited tool calls (this workspace's by default)
  --version, -V          print the version
  --help, -h             print this help

Example: claude mcp add mesh-mcp -- mesh-mcp run
";

/// Writes `--help` or `--version` text on stdout (the CLI convention: `mesh-mcp --help | less`
/// works) and returns exit status 0, or 1 when stdout is closed. Only reached on a path that
/// returns without serving: in server mode stdout belongs to the framing writer.
pub fn print_stdout(text: &str) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// The file path after `--config`, or `None` after saying on stderr that `cmd` needs one: the
/// one option every subcommand that reads a configuration parses alike.
pub(crate) fn config_arg(cmd: &str, value: Option<&String>) -> Option<std::path::PathBuf> {
    if value.is_none() {
        eprintln!("mesh-mcp {cmd}: --config needs a file path");
    }
    value.map(std::path::PathBuf::from)
}

/// The configuration of the workspace the command runs in (the current directory, or the
/// `--config` file given), for one-shot commands; on failure the message is on stderr, naming
/// `command`, and the exit status is returned: 1 when the directory cannot be read, 2 for a
/// configuration the user must fix.
pub fn workspace_config(
    command: &str,
    config_path: Option<&std::path::Path>,
) -> Result<crate::config::Config, i32> {
    let cwd = std::env::current_dir().map_err(|e| {
        eprintln!("mesh-mcp {command}: cannot read the current directory: {e}");
        1
    })?;
    let config = crate::config::discover(&cwd, config_path).map_err(|e| {
        eprintln!("mesh-mcp {command}: {e}");
        2
    })?;
    for w in &config.warnings {
        eprintln!("mesh-mcp {command}: warning: {w}");
    }
    Ok(config)
}

/// The command line after the program name, as UTF-8. An argument that is not (a path with
/// bytes of another encoding) is a usage error naming it, exit status 2 — never a panic.
pub fn utf8_args(program: &str) -> Result<Vec<String>, i32> {
    std::env::args_os()
        .skip(1)
        .enumerate()
        .map(|(i, a)| {
            a.into_string().map_err(|raw| {
                eprintln!(
                    "{program}: argument {} ({:?}) is not valid UTF-8; mesh-mcp takes its \
arguments (and the paths in them) as UTF-8. Rename the path or pass another.",
                    i + 1,
                    raw.to_string_lossy()
                );
                2
            })
        })
        .collect()
}

/// Entry point of the `mesh-mcp` binary; returns the process exit status.
pub fn main() -> i32 {
    let args = match utf8_args("mesh-mcp") {
        Ok(a) => a,
        Err(status) => return status,
    };
    let (cmd, rest) = match args.split_first() {
        Some((c, rest)) => (c.as_str(), rest),
        None => ("run", &[][..]),
    };
    match cmd {
        "--version" | "-V" | "version" => match rest.first() {
            None => print_stdout(&format!("mesh-mcp {}\n", crate::VERSION)),
            Some(extra) => {
                eprintln!(
                    "mesh-mcp: `{cmd}` takes no arguments, and `{extra}` is one. Run `mesh-mcp --version` alone."
                );
                2
            }
        },
        "--help" | "-h" | "help" => match rest {
            [] => print_stdout(USAGE),
            // `mesh-mcp help query` is `mesh-mcp query --help`.
            [sub] if COMMANDS.contains(&sub.as_str()) => dispatch(sub, &["--help".to_string()]),
            [extra, ..] => {
                eprintln!(
                    "mesh-mcp: `{extra}` is not a command `{cmd}` can describe. Run `mesh-mcp --help` for the commands, or `mesh-mcp <command> --help`."
                );
                2
            }
        },
        other => dispatch(other, rest),
    }
}

/// The subcommands, as `--help` lists them.
const COMMANDS: &[&str] = &[
    "run", "demo", "query", "graph", "impact", "init", "doctor", "audit", "stats",
];

/// Runs subcommand `cmd` (or `run`'s options given without it) with its arguments.
fn dispatch(cmd: &str, rest: &[String]) -> i32 {
    match cmd {
        "run" => run::main(rest),
        "demo" => demo::main(rest),
        "query" => query::main(rest),
        "graph" => graph::main(rest),
        "impact" => impact::main(rest),
        "init" => init::main(rest),
        "doctor" => doctor::main(rest),
        "audit" => audit::main(rest),
        "stats" => stats::main(rest),
        // `mesh-mcp --standalone` and `mesh-mcp --config FILE` are `run`'s options; any
        // other option is not one of run's, so the list of commands is the useful answer.
        "--standalone" | "--config" | "-c" => {
            let mut all = vec![cmd.to_string()];
            all.extend_from_slice(rest);
            run::main(&all)
        }
        other if other.starts_with('-') => {
            eprintln!(
                "mesh-mcp: unknown option `{other}`. Run `mesh-mcp --help` for the commands and their options."
            );
            2
        }
        other => {
            eprintln!("mesh-mcp: unknown command `{other}`. Run `mesh-mcp --help` for the list.");
            2
        }
    }
}

/// What the tests of the subcommand parsers share.
#[cfg(test)]
mod test_support {
    /// The command-line words `a`, owned, as the parsers take them.
    pub(super) fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }
}
