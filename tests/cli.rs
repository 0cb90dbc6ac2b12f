//! The command line, driven as a person would: `--help`, `--version`, `demo`.

use std::process::Command;

mod common;

fn mesh(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
        .args(args)
        .env("HOME", std::env::temp_dir())
        .output()
        .expect("run mesh-mcp")
}

#[test]
fn version_and_help() {
    // --help and --version print to stdout and exit 0, for every command.
    let out = mesh(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("mesh-mcp {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = mesh(&["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: mesh-mcp"));
    assert!(out.stderr.is_empty());
    for cmd in [
        "run", "demo", "query", "graph", "impact", "doctor", "init", "audit", "stats",
    ] {
        let out = mesh(&[cmd, "--help"]);
        assert!(out.status.success(), "{cmd} --help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Usage: mesh-mcp"), "{cmd} --help: {text}");
    }
    let out = mesh(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown command"));
    // `query <tool> --help` prints the tool's description and arguments.
    let out = mesh(&["query", "find_dependents", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Usage: mesh-mcp query find_dependents"),
        "{text}"
    );
    assert!(text.contains("target (string, required)"), "{text}");
    assert!(text.contains("granularity"), "{text}");
    assert_eq!(mesh(&["query", "nope", "--help"]).status.code(), Some(2));
    for flag in ["--version", "--help"] {
        let out = Command::new(env!("CARGO_BIN_EXE_meshd"))
            .arg(flag)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(
            !out.stdout.is_empty(),
            "meshd {flag} printed nothing on stdout"
        );
    }
}

#[test]
fn demo_runs_a_scripted_session_on_the_bundled_example() {
    let out = mesh(&["demo"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The transcript is the output: stdout, no escape codes when it is not a terminal.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"method\":\"initialize\""), "{stdout}");
    assert!(stdout.contains("← tools:"), "{stdout}");
    assert!(stdout.contains("## Index status"), "{stdout}");
    assert!(stdout.contains("Next steps"), "{stdout}");
    assert!(
        !stdout.contains('\x1b'),
        "escape codes in a piped transcript"
    );
    assert!(
        !stderr.contains("## Index status"),
        "the transcript went to stderr"
    );
}

/// The answers of a demo transcript that cite at least one `path:line`.
fn answers_with_evidence(transcript: &str) -> usize {
    let cite = regex_lite::Regex::new(r"[A-Za-z0-9_./-]+\.[A-Za-z]+:[0-9]+").unwrap();
    transcript
        .split("\n→ ")
        .skip(1)
        .filter(|a| {
            a.contains("\"tools/call\"") && cite.is_match(a.split_once('\n').map_or("", |x| x.1))
        })
        .count()
}

/// The workspaces a newcomer would try: the example, and each practice corpus when present.
fn practice_workspaces() -> Vec<std::path::PathBuf> {
    let mut out = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/polyglot-shop"
    ))];
    let corpora = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpora"));
    let corpora = if corpora.is_dir() {
        corpora.to_path_buf()
    } else {
        std::path::PathBuf::from("/work/shared/corpora")
    };
    if let Ok(rd) = std::fs::read_dir(&corpora) {
        let mut dirs: Vec<_> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        out.extend(dirs);
    }
    out
}

/// A fresh copy of `from` (practice corpora are read-only for tests).
fn fresh_copy(from: &std::path::Path, tag: &str) -> std::path::PathBuf {
    let ws = scratch(tag);
    common::copy_tree(from, &ws);
    ws.canonicalize().unwrap()
}

#[test]
fn a_newcomer_walks_from_help_to_answers_on_a_workspace_of_their_own() {
    let source = practice_workspaces().pop().unwrap();
    let ws = fresh_copy(&source, "newcomer");
    let out = mesh_in(&ws, &["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: mesh-mcp"));
    assert!(String::from_utf8_lossy(&mesh_in(&ws, &["--version"]).stdout).starts_with("mesh-mcp "));
    let out = mesh_in(&ws, &["init", "--write-ide-config"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ws.join(".agents/mesh-mcp.toml").is_file());
    assert!(ws.join(".mcp.json").is_file());
    // doctor finds meshd (cargo built it next to the test build of mesh-mcp).
    let out = mesh_in(&ws, &["doctor", "--json"]);
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let daemon = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "daemon")
        .unwrap();
    assert_ne!(daemon["status"], "warn", "{daemon}");
    assert_ne!(daemon["status"], "error", "{daemon}");
    // demo WORKSPACE asks the workspace's own questions: at least four answers with evidence.
    let out = mesh_in(&ws, &["demo", "."]);
    let transcript = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let with_evidence = answers_with_evidence(&transcript);
    assert!(
        with_evidence >= 4,
        "{with_evidence} answers with evidence:\n{transcript}"
    );
    assert!(transcript.contains("Next steps"), "{transcript}");
    // query index_status waits for the index and shows the file count.
    let out = mesh_in(&ws, &["query", "index_status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("Still indexing"), "{text}");
    assert!(
        regex_lite::Regex::new(r"[1-9][0-9]* files indexed")
            .unwrap()
            .is_match(&text),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&ws);
}

/// The lines of an answer that must survive a config `init` wrote: every line, except the
/// index status's clock readings.
fn comparable_lines(tool: &str, answer: &str) -> Vec<String> {
    answer
        .lines()
        .filter(|l| {
            tool != "index_status"
                || !(l.contains(" ago") || l.contains("built in") || l.contains("Workspace:"))
        })
        .map(str::to_string)
        .collect()
}

/// The questions the demo derives from `ws`'s own index, plus a few that are the same for
/// every workspace.
fn questions_for(ws: &std::path::Path) -> Vec<(String, serde_json::Value)> {
    let config = mesh_mcp::config::discover(ws, None).unwrap();
    let handle = mesh_mcp::index::snapshot::IndexHandle::new();
    let mut indexer = mesh_mcp::index::Indexer::new(std::sync::Arc::new(config), handle);
    let snap = indexer.rebuild();
    let mut qs: Vec<(String, serde_json::Value)> = mesh_mcp::cli::demo::questions(&snap)
        .into_iter()
        .map(|(t, a)| (t.to_string(), a))
        .collect();
    qs.push((
        "search_docs".into(),
        serde_json::json!({"query": "service api", "max_sections": 50}),
    ));
    qs.push((
        "smart_search".into(),
        serde_json::json!({"query": "service", "limit": 100}),
    ));
    qs.push((
        "visualize_mesh".into(),
        serde_json::json!({"format": "json"}),
    ));
    qs
}

#[test]
fn the_config_init_writes_never_makes_an_answer_worse() {
    for (n, source) in practice_workspaces().iter().enumerate() {
        let ws = fresh_copy(source, &format!("superset-{n}"));
        let questions = questions_for(&ws);
        let ask = |ws: &std::path::Path| -> Vec<String> {
            questions
                .iter()
                .map(|(tool, args)| {
                    let out = mesh_in(ws, &["query", tool, &args.to_string()]);
                    String::from_utf8_lossy(&out.stdout).into_owned()
                })
                .collect()
        };
        let before = ask(&ws);
        let out = mesh_in(&ws, &["init"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(ws.join(".agents/mesh-mcp.toml").is_file());
        let after = ask(&ws);
        for (((tool, args), b), a) in questions.iter().zip(&before).zip(&after) {
            let have: std::collections::HashSet<String> =
                comparable_lines(tool, a).into_iter().collect();
            for line in comparable_lines(tool, b) {
                assert!(
                    have.contains(&line),
                    "{}: {tool} {args}: the line {line:?} is lost with init's config.\n--- without:\n{b}\n--- with:\n{a}",
                    source.display()
                );
            }
        }
        let _ = std::fs::remove_dir_all(&ws);
    }
}

#[test]
fn demo_names_a_missing_workspace() {
    let out = mesh(&["demo", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`/definitely/not/here` does not exist"),
        "{err}"
    );
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = mesh(&["demo", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not a directory"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = mesh(&["demo", "a", "b"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("one workspace at a time"));
}

/// A fresh directory under the temp dir.
fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("mesh-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A tiny workspace: one service with a proto contract and a doc.
fn tiny_workspace(tag: &str) -> std::path::PathBuf {
    let ws = scratch(tag);
    std::fs::create_dir_all(ws.join("services/orders")).unwrap();
    std::fs::write(ws.join("services/orders/go.mod"), "module orders\n").unwrap();
    std::fs::write(
        ws.join("services/orders/orders.proto"),
        "syntax = \"proto3\";\npackage shop.v1;\nservice OrderService {\n  rpc CreateOrder(Req) returns (Res);\n}\nmessage Req {}\nmessage Res {}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("README.md"),
        "# Shop\n\nOrders are created by the order service.\n",
    )
    .unwrap();
    ws
}

/// Runs mesh-mcp in `dir` with a private HOME, audit database and socket directory.
fn mesh_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    mesh_cmd_in(Command::new(env!("CARGO_BIN_EXE_mesh-mcp")), dir, args)
}

/// Runs `cmd` (a mesh-mcp binary) in `dir` like [`mesh_in`].
fn mesh_cmd_in(mut cmd: Command, dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let home = dir.join(".home");
    std::fs::create_dir_all(&home).unwrap();
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("MESH_AUDIT_DB", home.join("audit.db"))
        .env("MESH_SOCKET_PATH", home.join("sock"))
        .env_remove("MESH_LOG")
        .env_remove("RUST_LOG");
    // A binary copied by this test may still be open for writing in a child another test
    // thread forked meanwhile ("Text file busy", ETXTBSY): that passes in moments.
    let mut tries = 0;
    loop {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => return r.expect("run mesh-mcp"),
        }
    }
}

#[test]
fn query_answers_on_stdout_with_exit_codes() {
    let ws = tiny_workspace("query");
    let out = mesh_in(
        &ws,
        &["query", "smart_search", r#"{"query": "OrderService"}"#],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("services/orders/orders.proto:3"), "{text}");
    let out = mesh_in(
        &ws,
        &[
            "query",
            "smart_search",
            r#"{"query": "OrderService"}"#,
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["isError"], false);
    // isError → 1; a bad argument names the field.
    let out = mesh_in(&ws, &["query", "smart_search", r#"{"qury": "x"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("qury"));
    // Usage errors → 2.
    for args in [
        vec!["query", "no_such_tool"],
        vec!["query", "smart_search", "{not json"],
        vec!["query", "smart_search", "[1]"],
        vec!["query"],
    ] {
        let out = mesh_in(&ws, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn graph_formats_and_a_checkout_independent_fingerprint() {
    let a = tiny_workspace("graph-a");
    let b = tiny_workspace("graph-b");
    let fa = mesh_in(&a, &["graph", "--format", "fingerprint"]);
    let fb = mesh_in(&b, &["graph", "--format", "fingerprint"]);
    assert!(fa.status.success());
    assert_eq!(
        fa.stdout, fb.stdout,
        "fingerprint depends on the checkout directory"
    );
    assert_eq!(String::from_utf8_lossy(&fa.stdout).trim().len(), 64);
    let m = mesh_in(&a, &["graph"]);
    assert!(String::from_utf8_lossy(&m.stdout).contains("graph LR"));
    let j = mesh_in(&a, &["graph", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert!(v["nodes"].is_array());
    let html = a.join("mesh.html");
    let h = mesh_in(
        &a,
        &["graph", "--format", "html", "-o", html.to_str().unwrap()],
    );
    assert!(h.status.success());
    assert!(h.stdout.is_empty());
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!doctype html>")
    );
    assert_eq!(
        mesh_in(&a, &["graph", "--format", "svg"]).status.code(),
        Some(2)
    );
}

#[test]
fn doctor_json_is_stable_and_fix_repairs_socket_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let ws = tiny_workspace("doctor");
    let one = mesh_in(&ws, &["doctor", "--json"]);
    let two = mesh_in(&ws, &["doctor", "--json"]);
    assert_eq!(
        one.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert_eq!(one.stdout, two.stdout);
    let checks: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let names: Vec<&str> = checks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // The JSON carries the same stable detail lines as the text: the roots, the languages.
    let roots = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "roots")
        .unwrap();
    assert!(
        roots["detail"]
            .as_str()
            .unwrap()
            .contains("services/orders"),
        "{roots}"
    );
    for n in [
        "config",
        "roots",
        "index",
        "inotify",
        "socket permissions",
        "daemon",
        "audit",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    // A socket directory open to others is an error; --fix makes it private.
    let sock = ws.join(".home/sock");
    std::fs::create_dir_all(&sock).unwrap();
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bad = mesh_in(&ws, &["doctor"]);
    assert_eq!(bad.status.code(), Some(1));
    // This one --fix can repair, so it is suggested.
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("mesh-mcp doctor --fix"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let fixed = mesh_in(&ws, &["doctor", "--fix"]);
    assert!(
        String::from_utf8_lossy(&fixed.stderr).contains("(fixed)"),
        "{}",
        String::from_utf8_lossy(&fixed.stderr)
    );
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert_eq!(mesh_in(&ws, &["doctor"]).status.code(), Some(0));
    // A damaged cache file is reported and --fix removes it (it is rebuilt on the next start).
    let id = mesh_mcp::daemon::socket::workspace_id(&ws.canonicalize().unwrap());
    let cache = ws.join(format!(".home/.cache/mesh-mcp/index/{id}.db"));
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    std::fs::write(&cache, b"this is not a database").unwrap();
    let warn = mesh_in(&ws, &["doctor"]);
    assert!(String::from_utf8_lossy(&warn.stderr).contains("damaged"));
    mesh_in(&ws, &["doctor", "--fix"]);
    assert!(!cache.exists());
}

#[test]
fn init_merges_ide_configs_and_is_idempotent() {
    let ws = tiny_workspace("init");
    std::fs::write(
        ws.join(".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  },\n  \"keep\": true\n}\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join(".cursor")).unwrap();
    std::fs::write(ws.join(".cursor/mcp.json"), "[\"not an object\"]").unwrap();
    let half = "# Notes\n<!-- mesh-mcp:end -->\n";
    std::fs::write(ws.join("CLAUDE.md"), half).unwrap();
    let out = mesh_in(&ws, &["init", "--write-ide-config"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Found: services/orders"), "{err}");
    // It says which command it registers (the test build is not on PATH: its absolute path).
    assert!(
        err.contains("Registering the server by its absolute path")
            || err.contains("Registering the server as `mesh-mcp`"),
        "{err}"
    );
    assert!(ws.join(".agents/mesh-mcp.toml").exists());
    let mcp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["other"]["command"], "x");
    assert_eq!(mcp["keep"], true);
    assert_eq!(mcp["mcpServers"]["mesh-mcp"]["args"][0], "run");
    assert_eq!(
        std::fs::read_to_string(ws.join(".cursor/mcp.json")).unwrap(),
        "[\"not an object\"]"
    );
    assert!(err.contains(".cursor/mcp.json: not a JSON object"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.join("CLAUDE.md")).unwrap(), half);
    assert!(
        std::fs::read_to_string(ws.join("AGENTS.md"))
            .unwrap()
            .contains("smart_search")
    );
    let vscode = std::fs::read_to_string(ws.join(".vscode/mcp.json")).unwrap();
    // A second run changes nothing.
    let snapshot = |p: &str| std::fs::read(ws.join(p)).unwrap();
    let before: Vec<Vec<u8>> = [
        ".mcp.json",
        ".vscode/mcp.json",
        "AGENTS.md",
        ".agents/mesh-mcp.toml",
    ]
    .iter()
    .map(|p| snapshot(p))
    .collect();
    let again = mesh_in(&ws, &["init", "--write-ide-config"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists and was kept"));
    let after: Vec<Vec<u8>> = [
        ".mcp.json",
        ".vscode/mcp.json",
        "AGENTS.md",
        ".agents/mesh-mcp.toml",
    ]
    .iter()
    .map(|p| snapshot(p))
    .collect();
    assert_eq!(before, after);
    assert!(vscode.contains("\"type\": \"stdio\""));
}

#[test]
fn doctor_warns_with_the_fix_when_meshd_cannot_be_found() {
    let ws = tiny_workspace("doctor-meshd");
    // Next to the test build's mesh-mcp, cargo built meshd: found, no warning about it.
    let out = mesh_in(&ws, &["doctor"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("meshd not found"), "{err}");
    let checks: serde_json::Value =
        serde_json::from_slice(&mesh_in(&ws, &["doctor", "--json"]).stdout).unwrap();
    let daemon = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "daemon")
        .unwrap();
    assert_ne!(daemon["status"], "warn", "{daemon}");
    // A lone mesh-mcp copy, with no meshd on PATH either: a warning that says how to fix it.
    let bin = scratch("doctor-meshd-bin");
    let lone = bin.join("mesh-mcp");
    std::fs::copy(env!("CARGO_BIN_EXE_mesh-mcp"), &lone).unwrap();
    let mut cmd = Command::new(&lone);
    cmd.env("PATH", &bin);
    let out = mesh_cmd_in(cmd, &ws, &["doctor"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("⚠ daemon: meshd not found next to mesh-mcp"),
        "{err}"
    );
    assert!(err.contains("cargo build --release"), "{err}");
    assert!(!err.contains("0 warning(s)"), "{err}");
    // --fix cannot build meshd, so it is not suggested.
    assert!(!err.contains("doctor --fix"), "{err}");
    // meshd on PATH is found.
    let path_dir = scratch("doctor-meshd-path");
    std::fs::copy(env!("CARGO_BIN_EXE_meshd"), path_dir.join("meshd")).unwrap();
    let mut cmd = Command::new(&lone);
    cmd.env("PATH", &path_dir);
    let out = mesh_cmd_in(cmd, &ws, &["doctor"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("meshd not found"), "{err}");
    let _ = std::fs::remove_dir_all(&bin);
    let _ = std::fs::remove_dir_all(&path_dir);
}

#[test]
fn plain_mesh_mcp_on_a_terminal_says_it_waits_for_a_client_and_stdout_stays_clean() {
    let ws = tiny_workspace("tty");
    // Piped (an MCP client): not a word outside the protocol, on either stream's stdout.
    let out = mesh_in(&ws, &["run", "--standalone"]);
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("waiting for an MCP client"));
    // On a terminal (util-linux `script` gives the server a pty; its stdin at EOF ends it).
    let has_script = Command::new("script").arg("--version").output().is_ok();
    if !has_script {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "`script` (util-linux) is needed for this check under CI"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the terminal notice check: no `script` (util-linux) on PATH"
        );
        return;
    }
    let bin = env!("CARGO_BIN_EXE_mesh-mcp");
    let out = mesh_in_cmd_script(&ws, bin);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("waiting for an MCP client on stdin"),
        "{text}"
    );
    assert!(text.contains("mesh-mcp --help"), "{text}");
}

/// Runs the server under `script`, so its stdin and stderr are a terminal. `run --standalone`
/// (what plain `mesh-mcp` runs, minus the daemon a test would leave behind).
fn mesh_in_cmd_script(dir: &std::path::Path, bin: &str) -> std::process::Output {
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("{bin} run --standalone"), "/dev/null"])
        .stdin(std::process::Stdio::null());
    mesh_cmd_in(cmd, dir, &[])
}

#[test]
fn init_registers_the_command_name_when_mesh_mcp_is_on_path() {
    let ws = tiny_workspace("init-path");
    let bin = scratch("init-path-bin");
    std::fs::copy(env!("CARGO_BIN_EXE_mesh-mcp"), bin.join("mesh-mcp")).unwrap();
    let mut cmd = Command::new(bin.join("mesh-mcp"));
    cmd.env("PATH", &bin);
    let out = mesh_cmd_in(cmd, &ws, &["init", "--write-ide-config"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("as `mesh-mcp` (found on PATH)"), "{err}");
    let mcp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["mesh-mcp"]["command"], "mesh-mcp");
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn smart_search_ranks_the_canonical_contract_and_hand_written_code_above_copies_and_stubs() {
    let ws = scratch("ranking");
    let proto = "syntax = \"proto3\";\npackage shop.v1;\nservice OrderService {\n  rpc CreateOrder(Req) returns (Res);\n}\nmessage Req {}\nmessage Res {}\n";
    for (rel, text) in [
        ("contracts/orders.proto", proto),
        ("services/web/protos/orders.proto", proto),
        ("services/orders/go.mod", "module orders\n"),
        (
            "services/orders/gen/orders.pb.go",
            "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage gen\n\ntype OrderService interface {\n\tCreateOrder()\n}\n",
        ),
        (
            "services/orders/server.go",
            "package main\n\ntype OrderService struct{}\n",
        ),
    ] {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = mesh_in(
        &ws,
        &[
            "query",
            "smart_search",
            r#"{"query": "OrderService", "limit": 10}"#,
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let pos = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing:\n{text}"))
    };
    let canonical = pos("`contracts/orders.proto:3`");
    let hand = pos("`services/orders/server.go:3`");
    let copy = pos("`services/web/protos/orders.proto:3`");
    let generated = pos("`services/orders/gen/orders.pb.go:4`");
    assert!(
        canonical < hand && hand < copy && copy < generated,
        "order: canonical, hand-written, copy, generated:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&ws);
}

/// An argument that is not UTF-8 (a legal Linux path) is a usage error naming it, never a
/// panic, in both binaries.
#[test]
fn arguments_that_are_not_utf8_are_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9");
    for (bin, args) in [
        (env!("CARGO_BIN_EXE_mesh-mcp"), vec!["demo"]),
        (env!("CARGO_BIN_EXE_mesh-mcp"), vec!["stats", "--db"]),
        (env!("CARGO_BIN_EXE_mesh-mcp"), vec!["impact", "--base"]),
        (env!("CARGO_BIN_EXE_meshd"), vec!["--socket"]),
    ] {
        let out = Command::new(bin).args(&args).arg(bad).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is not valid UTF-8"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
