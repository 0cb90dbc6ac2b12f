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
    // `--version` takes nothing after it; `help <command>` is that command's help.
    let out = mesh(&["-V", "extra"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`extra`") && err.contains("no arguments"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let out = mesh(&["help", "graph"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: mesh-mcp graph"));
    let out = mesh(&["--help", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`nope`"));
    let out = mesh(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown command"));
    // An unknown option before any command points at the list of commands, not at `run`.
    let out = mesh(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown option `--frobnicate`") && err.contains("`mesh-mcp --help`"),
        "{err}"
    );
    assert!(!err.contains("mesh-mcp run:"), "{err}");
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

/// The practice corpora beside the repository (`../shared/corpora/*`, as CI lays them out
/// and as the brief of issue 21 names them), else beside the checkout's parent directory (a
/// worktree one level deeper); empty when there are none.
fn practice_corpora() -> Vec<std::path::PathBuf> {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        repo.join("../shared/corpora"),
        repo.join("../../shared/corpora"),
    ];
    let Some(corpora) = candidates.iter().find(|c| c.is_dir()) else {
        return Vec::new();
    };
    let mut dirs: Vec<_> = std::fs::read_dir(corpora)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The bundled example workspace.
fn example_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/polyglot-shop"
    ))
}

/// The workspaces a newcomer would try: each practice corpus when there are any, else the
/// example. Says on stderr which, so a run without corpora is visible.
fn newcomer_workspaces() -> Vec<std::path::PathBuf> {
    let corpora = practice_corpora();
    if corpora.is_empty() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "NOTE no practice corpora at ../shared/corpora: the newcomer walk runs on the example only"
        );
        return vec![example_dir()];
    }
    corpora
}

/// The example and every practice corpus.
fn practice_workspaces() -> Vec<std::path::PathBuf> {
    let mut out = vec![example_dir()];
    out.extend(practice_corpora());
    out
}

/// A fresh copy of `from` (practice corpora are read-only for tests).
fn fresh_copy(from: &std::path::Path, tag: &str) -> std::path::PathBuf {
    let ws = scratch(tag);
    common::copy_tree(from, &ws);
    ws.canonicalize().unwrap()
}

/// The shell lines of the README's Quick start (its `sh` blocks), comments and blank lines
/// left out.
fn quick_start_lines() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("\n## Quick start")
        .nth(1)
        .expect("README has a Quick start")
        .split("\n## ")
        .next()
        .unwrap();
    let mut lines = Vec::new();
    let mut in_sh = false;
    for l in section.lines() {
        if l.starts_with("```") {
            in_sh = !in_sh && l.trim() == "```sh";
            continue;
        }
        let l = l.trim();
        if in_sh && !l.is_empty() && !l.starts_with('#') {
            lines.push(l.to_string());
        }
    }
    lines
}

/// One answer per tool call of a demo transcript: (tool, whether it cites a `path:line`).
fn demo_answers(transcript: &str) -> Vec<(String, bool)> {
    let cite = regex_lite::Regex::new(r"[A-Za-z0-9_./-]+\.[A-Za-z]+:[0-9]+").unwrap();
    let name = regex_lite::Regex::new(r#""name":"([a-z_]+)""#).unwrap();
    transcript
        .split("\n→ ")
        .skip(1)
        .filter(|a| a.starts_with('{') && a.contains("\"tools/call\""))
        .map(|a| {
            let (req, answer) = a.split_once('\n').unwrap_or((a, ""));
            let tool = name
                .captures_iter(req)
                .last()
                .map_or(String::new(), |c| c[1].to_string());
            (tool, cite.is_match(answer))
        })
        .collect()
}

/// Runs the README's Quick start, then the first minutes on a workspace of one's own, on a
/// fresh copy of each practice corpus (the example when there is none): `--help` and
/// `--version` on stdout, `init --write-ide-config`, `doctor` finding `meshd`, `demo .`
/// answering its questions with evidence and ending with runnable next steps, and
/// `query index_status` showing the file count `doctor` counted.
#[test]
fn a_newcomer_walks_from_help_to_answers_on_a_workspace_of_their_own() {
    let bin = env!("CARGO_BIN_EXE_mesh-mcp");
    // The Quick start: it builds every binary (meshd too) and its mesh-mcp commands run. Its
    // `target/release/mesh-mcp` is the binary under test; a line this test does not know
    // fails it, so a changed Quick start is walked again here.
    let lines = quick_start_lines();
    assert!(
        lines.iter().any(|l| l == "cargo build --release"),
        "the Quick start must build both binaries with `cargo build --release`: {lines:?}"
    );
    let workspaces = newcomer_workspaces();
    for (n, source) in workspaces.iter().enumerate() {
        let ws = fresh_copy(source, &format!("newcomer-{n}"));
        let mut dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut demo_transcript = None;
        for line in &lines {
            if line.starts_with("cargo build") {
                assert!(
                    !line.contains("--bin") && !line.contains(" -p "),
                    "{line}: builds only some binaries"
                );
                continue;
            }
            if line.starts_with("cargo test") {
                continue; // this is that run
            }
            if let Some(to) = line.strip_prefix("cd ") {
                assert!(to.starts_with('~'), "unknown cd in the Quick start: {line}");
                dir = ws.clone();
                continue;
            }
            let Some((_, args)) = line
                .split_once("mesh-mcp ")
                .filter(|(b, _)| b.ends_with("target/release/") && !b.contains(' '))
            else {
                panic!("a Quick start line this test does not know how to walk: {line}");
            };
            let args: Vec<&str> = args.split_whitespace().collect();
            let out = mesh_in(&dir, &args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "{line} in {}: {stderr}",
                dir.display()
            );
            if args.first() == Some(&"demo") {
                assert!(!out.stdout.is_empty(), "{line}: no transcript on stdout");
                if dir == ws {
                    demo_transcript = Some(String::from_utf8_lossy(&out.stdout).into_owned());
                }
            }
        }
        assert_eq!(
            dir, ws,
            "the Quick start never goes to the reader's workspace"
        );
        // --help and --version: stdout, exit 0, nothing on stderr.
        for flag in ["--help", "--version"] {
            let out = mesh_in(&ws, &[flag]);
            assert!(out.status.success(), "{flag}");
            assert!(out.stderr.is_empty(), "{flag} wrote to stderr");
            assert!(
                String::from_utf8_lossy(&out.stdout).starts_with("mesh-mcp"),
                "{flag}"
            );
        }
        // init (run by the Quick start) wrote the config and the IDE files.
        assert!(ws.join(".agents/mesh-mcp.toml").is_file());
        assert!(ws.join(".mcp.json").is_file());
        // doctor finds meshd (cargo built it next to the test build of mesh-mcp) and has no
        // warning for a fresh workspace.
        let out = mesh_in(&ws, &["doctor", "--json"]);
        let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let check = |name: &str| {
            checks
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == name)
                .unwrap_or_else(|| panic!("no {name} check: {checks:#}"))
                .clone()
        };
        let daemon = check("daemon");
        assert!(
            daemon["status"] == "ok"
                || (daemon["status"] == "info"
                    && daemon["detail"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("meshd: /")),
            "{daemon}"
        );
        for c in checks.as_array().unwrap() {
            assert!(
                c["status"] != "warn" && c["status"] != "error",
                "{}: {c}",
                source.display()
            );
        }
        let files = regex_lite::Regex::new(r"([1-9][0-9]*) files indexed").unwrap();
        let doctor_files = files
            .captures(check("index")["message"].as_str().unwrap())
            .map(|c| c[1].to_string())
            .expect("doctor counts the files");
        // demo . asks the workspace's own questions: every one is answered with evidence.
        let transcript = demo_transcript.expect("the Quick start runs `demo .` in the workspace");
        let answers = demo_answers(&transcript);
        let with_evidence = answers.iter().filter(|(_, e)| *e).count();
        assert!(
            with_evidence >= 4,
            "{}: {with_evidence} answers with evidence:\n{transcript}",
            source.display()
        );
        for (tool, evidence) in &answers {
            assert!(
                *evidence || tool == "visualize_mesh" || tool == "index_status",
                "{}: the demo asked {tool} a question its index has no answer to:\n{transcript}",
                source.display()
            );
        }
        assert!(
            transcript.starts_with(&format!("mesh-mcp demo on {}\n", ws.display())),
            "{}",
            transcript.lines().next().unwrap_or("")
        );
        // The next steps: numbered commands, each alone on its line so it runs as pasted, in
        // this workspace and with this binary (not on PATH here).
        let steps = transcript
            .split("\nNext steps for your own workspace:\n")
            .nth(1)
            .expect("the demo ends with next steps");
        let commands: Vec<&str> = steps
            .lines()
            .filter_map(|l| l.strip_prefix("  ").and_then(|l| l.split_once(". ")))
            .map(|(_, c)| c)
            .collect();
        assert_eq!(
            commands.first(),
            Some(&format!("cd {}", ws.display()).as_str()),
            "{steps}"
        );
        assert!(commands.len() >= 4, "{steps}");
        for c in &commands[1..] {
            assert!(
                c.starts_with(&format!("{bin} ")),
                "{c}: not this binary\n{steps}"
            );
        }
        assert!(
            commands
                .iter()
                .any(|c| c.ends_with(" init --write-ide-config"))
                && commands.iter().any(|c| c.ends_with(" doctor")),
            "{steps}"
        );
        // query index_status waits for the index and shows the file count doctor counted.
        let out = mesh_in(&ws, &["query", "index_status"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(!text.contains("Still indexing"), "{text}");
        assert_eq!(
            files.captures(&text).map(|c| c[1].to_string()),
            Some(doctor_files),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(&ws);
    }
}

/// The facts of one answer, for comparing answers: every `path:line` it cites, every row of
/// its tables and lists with the ordinals and counts that shift when a row is added left out,
/// and for the picture its services and links by name. A superset of facts is a superset of
/// the answer, whatever its headings count.
fn answer_facts(tool: &str, answer: &str) -> std::collections::BTreeSet<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut facts = BTreeSet::new();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(answer) {
        // visualize_mesh's JSON picture: nodes and links by name.
        let names: BTreeMap<&str, &str> = v["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| Some((n["id"].as_str()?, n["name"].as_str()?)))
            .collect();
        for n in v["nodes"].as_array().into_iter().flatten() {
            facts.insert(format!("node {} {}", n["name"], n["kind"]));
        }
        for l in v["links"].as_array().into_iter().flatten() {
            let end = |k: &str| {
                names
                    .get(l[k].as_str().unwrap_or(""))
                    .copied()
                    .unwrap_or("?")
            };
            facts.insert(format!(
                "link {} -> {} {} {}",
                end("from"),
                end("to"),
                l["kind"],
                l["confidence"]
            ));
        }
        return facts;
    }
    let cite =
        regex_lite::Regex::new(r"[A-Za-z0-9_.@/+-]+\.[A-Za-z0-9]+:[0-9]+(-L?[0-9]+)?").unwrap();
    let ordinal = regex_lite::Regex::new(r"^(\d+\.|\[\d+\]|###\s*\[\d+\])\s*").unwrap();
    let number = regex_lite::Regex::new(r"\d+").unwrap();
    let node = regex_lite::Regex::new(r#"^\s*(n\d+)[\[\(]+"([^"<]*)"#).unwrap();
    let edge = regex_lite::Regex::new(r"\b(n\d+)\b").unwrap();
    let mut mermaid_names: BTreeMap<String, String> = BTreeMap::new();
    for line in answer.lines() {
        if let Some(c) = node.captures(line) {
            mermaid_names.insert(c[1].to_string(), c[2].to_string());
        }
    }
    for line in answer.lines() {
        for m in cite.find_iter(line) {
            facts.insert(format!("cite {}", m.as_str()));
        }
        let t = line.trim();
        let row = if t.starts_with('|') {
            if t.starts_with("|---") || t.starts_with("| ---") {
                continue;
            }
            // Cells that are only a number: the row's ordinal and the counts that grow.
            let cells: Vec<&str> = t
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty() && !c.chars().all(|ch| ch.is_ascii_digit()))
                .collect();
            format!("row {}", cells.join(" | "))
        } else if let Some(label) = t.strip_prefix("- **").and_then(|l| l.split_once("**")) {
            // A labelled summary (`- **Files changed**: 2 (1 code, 1 other)`): its label; what
            // follows is counts, and the citations in it are facts of their own.
            format!("label {}", label.0)
        } else if t.starts_with("- ") || ordinal.is_match(t) {
            format!("item {}", ordinal.replace(t, ""))
        } else if tool == "visualize_mesh" && t.contains("--") || t.contains("==>") {
            // A mermaid link, its ends by name (ids follow the order of the services).
            edge.replace_all(t, |c: &regex_lite::Captures| {
                mermaid_names
                    .get(&c[1])
                    .cloned()
                    .unwrap_or_else(|| c[1].to_string())
            })
            .into_owned()
        } else {
            continue;
        };
        // Counts grow with the answer: every number outside a citation (each citation is a
        // fact of its own, above) reads N.
        let row = cite.replace_all(&row, "<cite>");
        facts.insert(number.replace_all(&row, "N").into_owned());
    }
    if tool == "index_status" {
        // Clock readings and the watcher's directory count are no facts of the index.
        facts.retain(|f| !f.contains(" ago") && !f.contains("built in") && !f.contains("Watcher:"));
    }
    facts
}

/// Every question worth asking `ws`, for each tool at least one, from its own index (the
/// demo's questions and more): several declarations, every `find_dependents` granularity,
/// each RPC, topic and route, a file and a symbol for impact, doc queries from its headings,
/// the picture as JSON and zoomed on the biggest service, and the branch's changes.
fn questions_for(ws: &std::path::Path) -> Vec<(String, serde_json::Value)> {
    use serde_json::json;
    let config = mesh_mcp::discover(ws, None).unwrap();
    let handle = mesh_mcp::IndexHandle::new();
    let mut indexer = mesh_mcp::Indexer::new(std::sync::Arc::new(config), handle);
    let snap = indexer.rebuild();
    let demo = mesh_mcp::demo_questions(&snap);
    let mut qs: Vec<(String, serde_json::Value)> = demo
        .iter()
        .map(|(t, a)| (t.to_string(), a.clone()))
        .collect();
    let arg = |tool: &str, key: &str| -> Option<String> {
        demo.iter()
            .find(|(t, _)| *t == tool)
            .and_then(|(_, a)| a[key].as_str().map(str::to_string))
    };
    // Declarations: the first of each kind in hand-written code, and the demo's.
    let mut names: Vec<String> = Vec::new();
    let mut kinds = std::collections::BTreeSet::new();
    for f in snap.files.iter().filter(|f| !f.is_test && !f.generated) {
        for s in f.symbols() {
            if kinds.insert(format!("{:?}", s.kind)) {
                names.push(f.name(s).to_string());
            }
        }
    }
    names.extend(arg("smart_search", "query"));
    names.sort();
    names.dedup();
    for name in names.iter().take(12) {
        qs.push(("smart_search".into(), json!({"query": name, "limit": 100})));
    }
    let target = arg("find_dependents", "target")
        .or_else(|| names.first().cloned())
        .unwrap_or_else(|| "main".into());
    for g in ["site", "symbol", "file", "package"] {
        qs.push((
            "find_dependents".into(),
            json!({"target": target, "granularity": g, "limit": 200, "include_tests": true}),
        ));
    }
    if let Some(name) = arg("smart_search", "query") {
        qs.push((
            "find_dependents".into(),
            json!({"target": name, "limit": 200}),
        ));
        qs.push((
            "analyze_impact".into(),
            json!({"target": name, "depth": 2, "limit": 200}),
        ));
    }
    let g = &snap.graph;
    for r in g.rpcs.iter().take(6) {
        let service = g
            .contracts
            .get(r.contract as usize)
            .map_or("", |c| c.name.as_str());
        qs.push((
            "analyze_grpc".into(),
            json!({"target": format!("{service}.{}", r.name)}),
        ));
    }
    for c in g.contracts.iter().take(3) {
        qs.push(("analyze_grpc".into(), json!({"target": c.name})));
    }
    if g.rpcs.is_empty() {
        // Nothing to trace: the answer says so, with and without the config.
        qs.push(("analyze_grpc".into(), json!({"target": target})));
    }
    for t in g.topics.iter().take(4) {
        qs.push((
            "analyze_impact".into(),
            json!({"target": t.name, "depth": 2, "limit": 200}),
        ));
    }
    for r in g.routes.iter().take(4) {
        qs.push((
            "analyze_impact".into(),
            json!({"target": format!("{} {}", r.method, r.path), "limit": 200}),
        ));
    }
    if let Some(f) = busiest_file(&snap) {
        qs.push(("analyze_impact".into(), json!({"target": f, "limit": 200})));
    }
    if let Some(q) = arg("search_docs", "query") {
        for word in std::iter::once(q.as_str()).chain(q.split_whitespace()) {
            qs.push((
                "search_docs".into(),
                json!({"query": word, "max_sections": 20}),
            ));
        }
    }
    qs.push((
        "search_docs".into(),
        json!({"query": "service api", "max_sections": 20}),
    ));
    qs.push((
        "visualize_mesh".into(),
        json!({"format": "json", "max_services": 200}),
    ));
    if let Some(root) = snap
        .roots
        .iter()
        .enumerate()
        .filter(|(_, r)| r.label != ".")
        .max_by_key(|(i, _)| snap.files.iter().filter(|f| f.root as usize == *i).count())
    {
        qs.push((
            "visualize_mesh".into(),
            json!({"format": "mermaid", "service": root.1.label}),
        ));
    }
    qs.push((
        "analyze_changes".into(),
        json!({"base": "main", "depth": 2, "limit": 200}),
    ));
    qs
}

/// The display path of the hand-written file that declares the most.
fn busiest_file(snap: &mesh_mcp::Snapshot) -> Option<String> {
    snap.files
        .iter()
        .filter(|f| !f.is_test && !f.generated)
        .max_by_key(|f| f.symbols().len())
        .map(|f| snap.display_path(f))
}

/// Makes `ws` a git repository on `main` and checks out a branch `feature` whose one commit
/// writes a line inside a declaration of its busiest file twice, so `analyze_changes` has a
/// changed declaration to trace.
fn branch_with_a_change(ws: &std::path::Path) {
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .current_dir(ws)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
    };
    // The private HOME of mesh_in lives in the workspace: never part of the repository.
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join(".git/info/exclude"), ".home/\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    git(&["checkout", "-q", "-b", "feature"]);
    let config = mesh_mcp::discover(ws, None).unwrap();
    let handle = mesh_mcp::IndexHandle::new();
    let mut indexer = mesh_mcp::Indexer::new(std::sync::Arc::new(config), handle);
    let snap = indexer.rebuild();
    // A line inside a declaration of more than one line, written twice.
    let (file, line) = snap
        .files
        .iter()
        .filter(|f| !f.is_test && !f.generated)
        .filter_map(|f| {
            let s = f.symbols().iter().find(|s| s.end_line > s.line)?;
            Some((f, s.line as usize + 1, f.symbols().len()))
        })
        .max_by_key(|(_, _, n)| *n)
        .map(|(f, line, _)| (f, line))
        .expect("a file with a declaration of several lines");
    let path = snap.abs_path(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let twice = lines[line - 1];
    lines.insert(line - 1, twice);
    std::fs::write(&path, lines.concat()).unwrap();
    git(&["commit", "-q", "-am", "change"]);
}

/// Issue 21's property: on the example and each practice corpus, every tool's answer with the
/// configuration `init` writes (and the IDE files and agent guides `--write-ide-config` adds)
/// holds every fact of the answer without it.
#[test]
fn the_config_init_writes_never_makes_an_answer_worse() {
    let tools: Vec<&str> = mesh_mcp::tool_names();
    for (n, source) in practice_workspaces().iter().enumerate() {
        let ws = fresh_copy(source, &format!("superset-{n}"));
        branch_with_a_change(&ws);
        let questions = questions_for(&ws);
        for tool in &tools {
            assert!(
                questions.iter().any(|(t, _)| t == tool),
                "{}: no question for {tool}",
                source.display()
            );
        }
        let ask = |ws: &std::path::Path| -> Vec<(Option<i32>, String)> {
            questions
                .iter()
                .map(|(tool, args)| {
                    let out = mesh_in(ws, &["query", tool, &args.to_string()]);
                    (
                        out.status.code(),
                        String::from_utf8_lossy(&out.stdout).into_owned(),
                    )
                })
                .collect()
        };
        let before = ask(&ws);
        // The questions are real ones: answered (not refused as bad arguments), and most with
        // facts, so the comparison below is not between two empty answers.
        let mut with_facts = std::collections::BTreeSet::new();
        for ((tool, args), (code, answer)) in questions.iter().zip(&before) {
            assert_eq!(
                *code,
                Some(0),
                "{}: {tool} {args}: {answer}",
                source.display()
            );
            if answer_facts(tool, answer)
                .iter()
                .any(|f| f.starts_with("cite ") || f.starts_with("node ") || f.starts_with("row "))
            {
                with_facts.insert(tool.as_str());
            }
        }
        for tool in [
            "smart_search",
            "find_dependents",
            "analyze_impact",
            "analyze_changes",
            "visualize_mesh",
            "index_status",
        ] {
            assert!(
                with_facts.contains(tool) || tool == "index_status",
                "{}: no {tool} answer has a fact to compare:\n{}",
                source.display(),
                questions
                    .iter()
                    .zip(&before)
                    .filter(|((t, _), _)| t == tool)
                    .map(|((_, a), (_, b))| format!("{a}\n{b}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        for variant in [
            &["init"][..],
            &["init", "--write-ide-config", "--force"][..],
        ] {
            let out = mesh_in(&ws, variant);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(ws.join(".agents/mesh-mcp.toml").is_file());
            let after = ask(&ws);
            for (((tool, args), (_, b)), (code, a)) in questions.iter().zip(&before).zip(&after) {
                assert_eq!(*code, Some(0), "{tool} {args} with {variant:?}: {a}");
                let have = answer_facts(tool, a);
                for fact in answer_facts(tool, b) {
                    assert!(
                        have.contains(&fact),
                        "{}: {tool} {args}: {fact:?} is lost after `mesh-mcp {}`.\n--- without:\n{b}\n--- with:\n{a}",
                        source.display(),
                        variant.join(" ")
                    );
                }
            }
        }
        let _ = std::fs::remove_dir_all(&ws);
    }
}

#[test]
fn demo_names_a_missing_workspace() {
    // A WORKSPACE that is not a directory is the user's argument to fix: a usage error.
    let out = mesh(&["demo", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`/definitely/not/here` does not exist"),
        "{err}"
    );
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = mesh(&["demo", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
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
    // An -o that cannot be written names the path.
    let bad = a.join("no-such-dir/mesh.md");
    let out = mesh_in(&a, &["graph", "-o", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(bad.to_str().unwrap()), "{err}");
}

#[test]
fn query_names_the_range_of_a_fractional_limit() {
    let ws = tiny_workspace("query-limit");
    let out = mesh_in(
        &ws,
        &[
            "query",
            "smart_search",
            r#"{"query": "Order", "limit": 5.5}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("`limit` is 5.5"), "{text}");
    assert!(text.contains("from 1 to 100"), "{text}");
    let out = mesh_in(
        &ws,
        &[
            "query",
            "find_dependents",
            r#"{"target": "Order", "limit": "9"}"#,
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("from 1 to 200"), "{text}");
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
    let id = mesh_mcp::workspace_id(&ws.canonicalize().unwrap());
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
    // The next command is one the reader can run as written.
    if err.contains("by its absolute path") {
        assert!(
            err.contains(&format!(
                "Next: `{} doctor`",
                env!("CARGO_BIN_EXE_mesh-mcp")
            )),
            "{err}"
        );
    }
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
    assert!(err.contains("Next: `mesh-mcp doctor`"), "{err}");
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

/// `doctor --json` carries the same detail lines as the text, check by check: the text shows
/// each check's detail lines, then only the figures that drift (timings, counts), which the
/// JSON leaves out so it stays identical across runs. With a file the index refuses, its
/// detail names the file in both.
#[test]
fn doctor_json_details_are_the_texts_detail_lines() {
    let ws = tiny_workspace("doctor-detail");
    std::fs::write(
        ws.join("services/orders/bundle.js"),
        format!("var a = \"{}\";\n", "x".repeat(5000)),
    )
    .unwrap();
    let json = mesh_in(&ws, &["doctor", "--json"]);
    let checks: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let text = mesh_in(&ws, &["doctor"]);
    let text = String::from_utf8_lossy(&text.stderr);
    // The text's blocks: "<glyph> <name>: <message>" and its indented lines.
    let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines().skip(1) {
        if let Some(d) = line.strip_prefix("    ") {
            if let Some(b) = blocks.last_mut() {
                b.1.push(d.to_string());
            }
        } else if let Some((_, head)) = line.split_once(' ') {
            blocks.push((head.to_string(), Vec::new()));
        }
    }
    let checks = checks.as_array().unwrap();
    assert_eq!(checks.len(), blocks.len() - 1, "{text}"); // the last line is the summary
    for (c, (head, lines)) in checks.iter().zip(&blocks) {
        let name = c["name"].as_str().unwrap();
        assert!(
            head.starts_with(&format!("{name}: {}", c["message"].as_str().unwrap())),
            "{head} vs {c}"
        );
        let detail: Vec<&str> = c["detail"].as_str().map_or(vec![], |d| d.lines().collect());
        assert!(
            lines.len() >= detail.len() && lines.iter().zip(&detail).all(|(a, b)| a == b),
            "{name}: the text's lines {lines:?} do not start with the JSON's {detail:?}"
        );
    }
    let rejected = checks
        .iter()
        .find(|c| c["name"] == "rejected files")
        .unwrap();
    assert!(
        rejected["detail"]
            .as_str()
            .is_some_and(|d| d.contains("services/orders/bundle.js")),
        "{rejected}"
    );
    let _ = std::fs::remove_dir_all(&ws);
}

/// `stats` counts the current directory's workspace by default, says how many calls it left
/// out and how to count them, and explains the `(<20)` it shows for a p95 it cannot compute.
#[test]
fn stats_is_per_workspace_and_explains_what_it_cannot_count() {
    let a = tiny_workspace("stats-a");
    let b = tiny_workspace("stats-b");
    // One audit database for both, as a user has.
    let home = a.join(".home");
    std::fs::create_dir_all(&home).unwrap();
    let db = home.join("audit.db");
    let run = |ws: &std::path::Path, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
            .args(args)
            .current_dir(ws)
            .env("HOME", &home)
            .env("MESH_AUDIT_DB", &db)
            .env("MESH_SOCKET_PATH", home.join("sock"))
            .env_remove("MESH_LOG")
            .output()
            .unwrap()
    };
    let ask = |ws: &std::path::Path| {
        run(
            ws,
            &["query", "smart_search", r#"{"query": "OrderService"}"#],
        )
    };
    assert!(ask(&a).status.success());
    assert!(ask(&a).status.success());
    assert!(ask(&b).status.success());
    let stats = |ws: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["stats"];
        args.extend_from_slice(extra);
        run(ws, &args)
    };
    let out = stats(&a, &[]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("calls: 2 "), "{text}");
    assert!(
        text.contains(&format!(
            "workspace: {}",
            a.canonicalize().unwrap().display()
        )),
        "{text}"
    );
    assert!(text.contains("(<20)"), "{text}");
    assert!(
        text.contains("(<20): fewer than 20 timed calls, too few for a p95"),
        "{text}"
    );
    assert!(
        text.contains("1 more call(s) in this window were answered for other workspaces")
            && text.contains("`--all-workspaces`"),
        "{text}"
    );
    let all = stats(&a, &["--all-workspaces"]);
    assert!(String::from_utf8_lossy(&all.stderr).contains("calls: 3 "));
    let json = stats(&b, &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["calls"], 1, "{v}");
    assert_eq!(v["other_workspaces_calls"], 2, "{v}");
    assert_eq!(v["p95_min_samples"], 20, "{v}");
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// On a terminal the demo's requests are bold; with `NO_COLOR` set, or piped, there is no
/// escape code at all.
#[test]
fn demo_on_a_terminal_is_bold_unless_no_color() {
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "`script` (util-linux) is needed for this check under CI"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED demo_on_a_terminal_is_bold_unless_no_color: no `script` (util-linux) on PATH"
        );
        return;
    }
    let ws = tiny_workspace("demo-tty");
    let demo = |no_color: Option<&str>| {
        let mut cmd = Command::new("script");
        cmd.args([
            "-qec",
            &format!("{} demo .", env!("CARGO_BIN_EXE_mesh-mcp")),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null());
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        } else {
            cmd.env_remove("NO_COLOR");
        }
        let out = mesh_cmd_in(cmd, &ws, &[]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let plain = demo(None);
    assert!(plain.contains("\x1b[1m→ "), "{plain}");
    let no_color = demo(Some("1"));
    assert!(no_color.contains("→ "), "{no_color}");
    assert!(!no_color.contains('\x1b'), "{no_color}");
    // NO_COLOR set but empty does not ask for plain output (no-color.org).
    assert!(demo(Some("")).contains("\x1b[1m"));
    let _ = std::fs::remove_dir_all(&ws);
}

/// Razor files are C#: a component's `@inject T Name` uses `T` through the `@using` of an
/// `_Imports.razor` in its folder or above; a component is a class in its folder's namespace,
/// used by markup tags in other projects; `@page` routes are HTTP routes.
#[test]
fn razor_components_inject_are_declared_and_serve_their_pages() {
    let ws = scratch("razor");
    for (rel, text) in [
        (
            "src/Ui/Ui.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk.Razor\"></Project>\n",
        ),
        (
            "src/Ui/Services/CatalogService.cs",
            "namespace Shop.Ui.Services;\n\npublic class CatalogService\n{\n}\n",
        ),
        (
            "src/Ui/Catalog/CatalogItem.cs",
            "namespace Shop.Ui.Catalog;\n\npublic record CatalogItem(int Id);\n",
        ),
        (
            "src/Ui/Catalog/CatalogListItem.razor",
            "<div class=\"item\">@Item.Id</div>\n@code {\n    [Parameter] public CatalogItem Item { get; set; }\n}\n",
        ),
        (
            "src/Web/Web.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk.Web\"></Project>\n",
        ),
        (
            "src/Web/Components/_Imports.razor",
            "@using Shop.Ui.Services\n@using Shop.Ui.Catalog\n",
        ),
        (
            "src/Web/Components/Pages/ItemPage.razor",
            "\u{feff}@page \"/item/{itemId:int}\"\n@inject CatalogService CatalogService\n\n<CatalogListItem Item=\"item\" />\n@code {\n    CatalogItem? item;\n}\n",
        ),
        // Outside the folder of the imports file: no dependent.
        (
            "src/Web/Other/Lookalike.razor",
            "@inject CatalogService CatalogService\n",
        ),
    ] {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let query = |tool: &str, args: &str| {
        let out = mesh_in(&ws, &["query", tool, args]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{text}");
        text
    };
    let text = query("find_dependents", r#"{"target": "CatalogService"}"#);
    assert!(
        text.contains("`src/Web/Components/Pages/ItemPage.razor:2` — uses CatalogService (@using Shop.Ui.Services in Components/_Imports.razor)"),
        "{text}"
    );
    assert!(!text.contains("Lookalike"), "{text}");
    let text = query("find_dependents", r#"{"target": "CatalogListItem"}"#);
    assert!(
        text.contains("`src/Web/Components/Pages/ItemPage.razor:4`"),
        "{text}"
    );
    let text = query("smart_search", r#"{"query": "CatalogListItem"}"#);
    assert!(
        text.contains("src/Ui/Catalog/CatalogListItem.razor:1"),
        "{text}"
    );
    let text = query(
        "smart_search",
        r#"{"query": "/item/{itemId:int}", "kind": "endpoint"}"#,
    );
    assert!(
        text.contains("src/Web/Components/Pages/ItemPage.razor:1"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&ws);
}

/// `find_dependents` of a C# type lists the files that use it through their namespace: a
/// `using` of the namespace in the file, or a `global using` of it anywhere in the file's
/// project (a BOM before it included); a file of a project without either is no dependent.
#[test]
fn find_dependents_of_a_csharp_type_lists_users_through_using_and_global_using() {
    let ws = scratch("csharp-using");
    for (rel, text) in [
        (
            "src/Bus/Bus.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk\"></Project>\n",
        ),
        (
            "src/Bus/Abstractions/IBus.cs",
            "namespace Shop.Bus.Abstractions;\n\npublic interface IBus\n{\n    void Publish(string topic);\n}\n",
        ),
        (
            "src/Api/Api.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk.Web\"></Project>\n",
        ),
        (
            "src/Api/GlobalUsings.cs",
            "\u{feff}global using Shop.Bus.Abstractions;\nglobal using System.Text;\n",
        ),
        (
            "src/Api/Services/Publisher.cs",
            "namespace Shop.Api.Services;\n\npublic class Publisher(IBus bus)\n{\n    public void Run() => bus.Publish(\"x\");\n}\n",
        ),
        (
            "src/Worker/Worker.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk.Worker\"></Project>\n",
        ),
        (
            "src/Worker/Relay.cs",
            "using Shop.Bus.Abstractions;\n\nnamespace Shop.Worker;\n\npublic class Relay\n{\n    private readonly IBus _bus;\n}\n",
        ),
        (
            "src/Other/Other.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk\"></Project>\n",
        ),
        (
            "src/Other/Lookalike.cs",
            "namespace Shop.Other;\n\npublic class Lookalike\n{\n    private readonly IBus _bus;\n}\n",
        ),
    ] {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = mesh_in(&ws, &["query", "find_dependents", r#"{"target": "IBus"}"#]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("`src/Api/Services/Publisher.cs:3` — uses IBus (global using Shop.Bus.Abstractions in its project)"),
        "{text}"
    );
    assert!(
        text.contains("`src/Worker/Relay.cs:7` — uses IBus (using Shop.Bus.Abstractions)"),
        "{text}"
    );
    assert!(!text.contains("Lookalike.cs"), "{text}");
    assert!(text.contains("2 dependent(s) in 2 file(s)"), "{text}");
    let _ = std::fs::remove_dir_all(&ws);
}

/// `index_status`, like every tool, answers from a published generation: it waits for the
/// first index (in an MCP session and on the command line) unless asked `wait: false`, which
/// answers with the progress at once.
#[test]
fn index_status_waits_for_the_first_index_unless_asked_not_to() {
    let ws = tiny_workspace("status-wait");
    let slow = [
        ("MESH_TEST_FIXTURES", "1"),
        ("MESH_TEST_INDEX_DELAY_MS", "900"),
    ];
    let mut s = common::Server::start_with(&ws, &slow);
    s.call(
        1,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    s.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let text = |r: &serde_json::Value| {
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let early = s.call(
        2,
        "tools/call",
        serde_json::json!({"name": "index_status", "arguments": {"wait": false}}),
    );
    assert!(text(&early).contains("Still indexing"), "{}", text(&early));
    let waited = s.call(
        3,
        "tools/call",
        serde_json::json!({"name": "index_status", "arguments": {}}),
    );
    assert!(text(&waited).contains("files indexed"), "{}", text(&waited));
    let _ = s.finish(std::time::Duration::from_secs(5));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mesh-mcp"));
    cmd.envs(slow);
    let out = mesh_cmd_in(cmd, &ws, &["query", "index_status"]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("files indexed") && !t.contains("Still indexing"),
        "{t}"
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mesh-mcp"));
    cmd.envs(slow);
    let out = mesh_cmd_in(cmd, &ws, &["query", "index_status", r#"{"wait": false}"#]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("Still indexing"), "{t}");
    let _ = std::fs::remove_dir_all(&ws);
}
