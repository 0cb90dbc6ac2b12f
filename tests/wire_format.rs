//! `analyze_grpc`'s wire-format check, driven through the real `mesh-mcp` binary over stdio
//! on real git repositories made here: one commit per kind of `.proto` change on a branch,
//! compared with `main`, and every git edge case of the original's table (not a repository, a
//! new file, an unknown base, git missing, an unchanged file, a repository without commits,
//! refused bases, a `GIT_DIR` in the environment).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Server, temp_dir, tool_text};
use serde_json::{Value, json};

const BASE: &str = r#"syntax = "proto3";
package acme.orders.v1;

service OrderService {
  rpc CreateOrder(CreateOrderRequest) returns (Order);
}

message CreateOrderRequest {
  string customer = 1;
}

message Order {
  string id = 1;
  int64 amount = 2;
  string note = 3;
  Status status = 4;
  repeated Item items = 5;
  map<string, string> labels = 6;
  oneof payment {
    string card = 7;
    string iban = 8;
  }
  reserved 9;

  message Item {
    string sku = 1;
    int32 qty = 2;
  }
}

enum Status {
  STATUS_UNSPECIFIED = 0;
  STATUS_OPEN = 1;
  STATUS_DONE = 2;
}
"#;

const PROTO: &str = "proto/orders.proto";

/// Runs git for the test's own setup (not the code under test).
fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?} in {}", dir.display());
}

/// A workspace that is a git repository with `BASE` committed on `main`.
fn repo(tag: &str) -> PathBuf {
    let dir = temp_dir(tag);
    git(&dir, &["init", "-q", "-b", "main"]);
    write(&dir, PROTO, BASE);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    dir
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `BASE` with each `(from, to)` replaced once.
fn edited(replacements: &[(&str, &str)]) -> String {
    let mut text = BASE.to_string();
    for (from, to) in replacements {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
    }
    text
}

fn start(dir: &Path, env: &[(&str, &str)]) -> Server {
    let mut s = Server::start_with(dir, env);
    s.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s
}

/// Calls analyze_grpc; returns (isError, text).
fn analyze(s: &mut Server, id: i64, args: Value) -> (bool, String) {
    let resp = s.call(
        id,
        "tools/call",
        json!({"name": "analyze_grpc", "arguments": args}),
    );
    let is_error = resp["result"]["isError"] == json!(true);
    (is_error, tool_text(&resp).to_string())
}

/// The `rule: `element` #n` head of every breaking finding, and of every warning.
fn findings(text: &str) -> (Vec<String>, Vec<String>) {
    let head = |line: &str| line.split(" (L").next().unwrap_or(line).to_string();
    let breaking = text
        .lines()
        .filter_map(|l| {
            l.split_once(". `WIRE_FORMAT_BREAKING_CHANGE` ")
                .map(|(_, r)| head(r))
        })
        .collect();
    let mut warnings = Vec::new();
    let mut in_warnings = false;
    for line in text.lines() {
        if line.starts_with("- **Warnings**") {
            in_warnings = true;
        } else if in_warnings && let Some(rest) = line.strip_prefix("  - ") {
            warnings.push(head(rest));
        } else if !line.starts_with("  ") {
            in_warnings = false;
        }
    }
    (breaking, warnings)
}

#[test]
fn each_kind_of_change_is_found_exactly() {
    let dir = repo("wire-cases");
    let mut s = start(&dir, &[]);
    let cases: Vec<(&str, String, Vec<&str>, Vec<&str>)> = vec![
        (
            "renumber a field",
            edited(&[("string note = 3;", "string note = 10;")]),
            vec!["field renumbered: `Order.note` #10"],
            vec![],
        ),
        (
            "delete a field without reserved",
            edited(&[("  string note = 3;\n", "")]),
            vec!["field deleted without `reserved`: `Order.note` #3"],
            vec![],
        ),
        (
            "delete a field with reserved number and name",
            edited(&[("string note = 3;", "reserved 3;\n  reserved \"note\";")]),
            vec![],
            vec![],
        ),
        (
            "delete a field reserving only the number",
            edited(&[("string note = 3;", "reserved 3;")]),
            vec![],
            vec!["name not reserved: `Order.note` #3"],
        ),
        (
            "reuse a reserved number",
            edited(&[("reserved 9;", "bool urgent = 9;")]),
            vec!["field number reused: `Order.urgent` #9"],
            vec![],
        ),
        (
            "renumber an enum value",
            edited(&[("STATUS_DONE = 2;", "STATUS_DONE = 5;")]),
            vec!["enum value renumbered: `Status.STATUS_DONE` #5"],
            vec![],
        ),
        (
            "delete an enum value without reserved",
            edited(&[("  STATUS_DONE = 2;\n", "")]),
            vec!["enum value deleted without `reserved`: `Status.STATUS_DONE` #2"],
            vec![],
        ),
        (
            "change a type within its group",
            edited(&[("int64 amount = 2;", "int32 amount = 2;")]),
            vec![],
            vec![],
        ),
        (
            "change a type across groups",
            edited(&[("int64 amount = 2;", "string amount = 2;")]),
            vec!["incompatible type change: `Order.amount` #2"],
            vec![],
        ),
        (
            "change cardinality of a scalar",
            edited(&[("int64 amount = 2;", "repeated int64 amount = 2;")]),
            vec!["cardinality change: `Order.amount` #2"],
            vec![],
        ),
        (
            "map to singular",
            edited(&[("map<string, string> labels = 6;", "string labels = 6;")]),
            vec!["cardinality change: `Order.labels` #6"],
            vec![],
        ),
        (
            "rename a field in place",
            edited(&[("string note = 3;", "string comment = 3;")]),
            vec![],
            vec!["renamed in place: `Order.comment` #3"],
        ),
        (
            "move a field into the existing oneof",
            edited(&[
                ("  string note = 3;\n", ""),
                ("string iban = 8;", "string iban = 8;\n    string note = 3;"),
            ]),
            vec!["oneof membership change: `Order.note` #3"],
            vec![],
        ),
        (
            "renumber a oneof member onto a deleted field's number",
            edited(&[
                ("  string note = 3;\n", ""),
                ("string iban = 8;", "string iban = 3;"),
            ]),
            vec!["field renumbered: `Order.iban` #3"],
            vec![],
        ),
        (
            "change a nested message's field type",
            edited(&[("int32 qty = 2;", "string qty = 2;")]),
            vec!["incompatible type change: `Order.Item.qty` #2"],
            vec![],
        ),
        (
            "compatible changes only",
            edited(&[
                ("string note = 3;", "// why\n  optional bytes note = 3;"),
                ("reserved 9;", "reserved 9;\n  string channel = 10;"),
                ("int32 qty = 2;", "uint32 qty = 2;"),
            ]),
            vec![],
            vec![],
        ),
    ];
    for (i, (name, text, breaking, warnings)) in cases.iter().enumerate() {
        let branch = format!("case-{i}");
        git(&dir, &["checkout", "-q", "-B", &branch, "main"]);
        write(&dir, PROTO, text);
        git(&dir, &["commit", "-q", "-am", name]);
        let (is_error, out) = analyze(
            &mut s,
            10 + i as i64,
            json!({"target": PROTO, "base": "main"}),
        );
        assert!(!is_error, "{name}: {out}");
        assert!(
            out.contains("### Wire-format check: `proto/orders.proto`"),
            "{name}: {out}"
        );
        assert!(
            out.contains("- **Base**: `main`, commit `"),
            "{name}: {out}"
        );
        let (got_breaking, got_warnings) = findings(&out);
        assert_eq!(got_breaking, *breaking, "{name}: {out}");
        assert_eq!(got_warnings, *warnings, "{name}: {out}");
        if breaking.is_empty() {
            assert!(
                out.contains("- **Result**: no `WIRE_FORMAT_BREAKING_CHANGE`"),
                "{name}: {out}"
            );
        } else {
            assert!(
                out.contains(&format!(
                    "- **Result**: {} × `WIRE_FORMAT_BREAKING_CHANGE`",
                    breaking.len()
                )),
                "{name}: {out}"
            );
            assert!(out.contains("     - Fix: "), "{name}: {out}");
        }
        // Without a base, the merge-base with main is the same commit.
        let (is_error, out) = analyze(&mut s, 100 + i as i64, json!({"target": PROTO}));
        assert!(!is_error, "{name}: {out}");
        assert!(
            out.contains("- **Base**: merge-base of `HEAD` and `main`"),
            "{name}: {out}"
        );
        assert_eq!(findings(&out).0, *breaking, "{name}: {out}");
    }
}

#[test]
fn the_service_target_traces_the_contract_and_checks_its_file() {
    let dir = repo("wire-service");
    git(&dir, &["checkout", "-q", "-b", "feature"]);
    write(
        &dir,
        PROTO,
        &edited(&[("string note = 3;", "string note = 10;")]),
    );
    let mut s = start(&dir, &[]);
    let (is_error, out) = analyze(&mut s, 2, json!({"target": "OrderService.CreateOrder"}));
    assert!(!is_error, "{out}");
    assert!(
        out.contains("### Service `acme.orders.v1.OrderService` — `proto/orders.proto:4`"),
        "{out}"
    );
    assert!(
        out.contains("- **Definition**: `proto/orders.proto:5` — `rpc CreateOrder(CreateOrderRequest) returns (Order)`"),
        "{out}"
    );
    assert!(
        out.contains(
            "- **Server handlers: 0 found** — no handler of `OrderService.CreateOrder` in "
        ),
        "{out}"
    );
    assert!(out.contains("index generation 1"), "{out}");
    // The working tree (uncommitted) against the merge-base with main.
    assert!(
        out.contains("- **Base**: merge-base of `HEAD` and `main`"),
        "{out}"
    );
    assert_eq!(
        findings(&out).0,
        ["field renumbered: `Order.note` #10"],
        "{out}"
    );

    // An unchanged file says so.
    write(&dir, PROTO, BASE);
    let (_, out) = analyze(&mut s, 3, json!({"target": PROTO}));
    assert!(
        out.contains("- **Result**: unchanged since the base — no wire-format changes."),
        "{out}"
    );

    // A new file that the base does not have.
    write(
        &dir,
        "proto/new.proto",
        "syntax = \"proto3\";\nmessage N { string a = 1; }\n",
    );
    let (is_error, out) = analyze(
        &mut s,
        4,
        json!({"target": "proto/new.proto", "base": "main"}),
    );
    assert!(!is_error, "{out}");
    assert!(
        out.contains("- **Result**: new file — `proto/new.proto` does not exist at `"),
        "{out}"
    );
    assert!(
        out.contains("_`proto/new.proto` declares no gRPC service in the index"),
        "{out}"
    );

    // An unknown base is a tool error naming it.
    let (is_error, out) = analyze(
        &mut s,
        5,
        json!({"target": PROTO, "base": "no-such-branch"}),
    );
    assert!(is_error, "{out}");
    assert!(out.contains("Unknown base `no-such-branch`"), "{out}");
    assert!(out.contains("origin/main"), "{out}");

    // A syntax error in the working tree: not compared, no partial findings.
    write(
        &dir,
        PROTO,
        &edited(&[("message Order {", "message Order {{")]),
    );
    let (is_error, out) = analyze(&mut s, 6, json!({"target": PROTO}));
    assert!(!is_error, "{out}");
    assert!(
        out.contains("- **Result**: not compared — the working-tree version has a syntax error"),
        "{out}"
    );
    assert!(findings(&out).0.is_empty(), "{out}");

    // A path outside the workspace goes through the jail.
    let (is_error, out) = analyze(&mut s, 7, json!({"target": "/etc/passwd.proto"}));
    assert!(is_error, "{out}");
    let (is_error, out) = analyze(&mut s, 8, json!({"target": "../x.proto"}));
    assert!(is_error, "{out}");
}

#[test]
fn outside_a_repository_skips_or_fails_as_the_base_says() {
    let dir = temp_dir("wire-norepo");
    write(&dir, PROTO, BASE);
    let mut s = start(&dir, &[]);
    let (is_error, out) = analyze(&mut s, 2, json!({"target": "OrderService"}));
    assert!(!is_error, "{out}");
    assert!(
        out.contains("### Service `acme.orders.v1.OrderService`"),
        "{out}"
    );
    assert!(
        out.contains("_Skipped: `proto/orders.proto` is not inside a git repository._"),
        "{out}"
    );
    // An explicit base outside git skips the check with a note; the trace still answers.
    let (is_error, out) = analyze(&mut s, 3, json!({"target": "OrderService", "base": "main"}));
    assert!(!is_error, "{out}");
    assert!(
        out.contains("### Service `acme.orders.v1.OrderService`"),
        "{out}"
    );
    assert!(
        out.contains("is not inside a git repository, so there is no `main` to compare with._"),
        "{out}"
    );
    // No .proto for the target: the explicit base says why nothing was compared.
    let (is_error, out) = analyze(
        &mut s,
        4,
        json!({"target": "PaymentService", "base": "main"}),
    );
    assert!(!is_error, "{out}");
    assert!(
        out.contains("_Skipped: no `.proto` definition is indexed for `PaymentService`"),
        "{out}"
    );
    let (_, out) = analyze(&mut s, 5, json!({"target": "PaymentService"}));
    assert!(!out.contains("Wire-format check"), "{out}");
}

#[test]
fn a_repository_without_commits_is_skipped() {
    let dir = temp_dir("wire-empty");
    git(&dir, &["init", "-q", "-b", "main"]);
    write(&dir, PROTO, BASE);
    let mut s = start(&dir, &[]);
    let (is_error, out) = analyze(&mut s, 2, json!({"target": PROTO}));
    assert!(!is_error, "{out}");
    assert!(out.contains("has no commits yet"), "{out}");
    let (is_error, out) = analyze(&mut s, 3, json!({"target": PROTO, "base": "main"}));
    assert!(is_error, "{out}");
    assert!(out.contains("Unknown base `main`"), "{out}");
}

#[test]
fn without_git_on_path_bases_are_still_validated_first() {
    let dir = repo("wire-nogit");
    let empty_path = temp_dir("wire-empty-path");
    let path = empty_path.to_string_lossy().into_owned();
    let mut s = start(&dir, &[("PATH", &path)]);
    let (is_error, out) = analyze(&mut s, 2, json!({"target": PROTO}));
    assert!(!is_error, "{out}");
    assert!(
        out.contains("_Skipped: git is not installed or not on PATH"),
        "{out}"
    );
    let (is_error, out) = analyze(&mut s, 3, json!({"target": PROTO, "base": "main"}));
    assert!(is_error, "{out}");
    assert!(out.contains("git is not installed or not on PATH"), "{out}");
    // Refused before git would run: the message names the syntax problem, not the missing git.
    let long = "a".repeat(201);
    for (i, (base, why)) in [
        ("-x", "starts with `-`"),
        ("--output=/tmp/pwned", "starts with `-`"),
        ("HEAD:secrets.txt", "contains `:`"),
        ("main feature", "whitespace"),
        ("main\u{7}", "control character"),
        ("", "empty"),
        (long.as_str(), "201 bytes"),
    ]
    .iter()
    .enumerate()
    {
        let (is_error, out) = analyze(
            &mut s,
            10 + i as i64,
            json!({"target": PROTO, "base": base}),
        );
        assert!(is_error, "{base:?}: {out}");
        assert!(out.starts_with("Invalid base "), "{base:?}: {out}");
        assert!(out.contains(why), "{base:?}: {out}");
        assert!(
            out.contains("{\"base\": \"origin/main\"}"),
            "{base:?}: {out}"
        );
        assert!(!out.contains("not on PATH"), "{base:?}: {out}");
    }
    // Strict arguments.
    let (is_error, out) = analyze(&mut s, 30, json!({"target": PROTO, "bse": "main"}));
    assert!(is_error && out.contains("bse"), "{out}");
}

#[test]
fn git_dir_in_the_environment_cannot_redirect_the_check() {
    // Another repository whose `main` has a different version of the same path.
    let other = repo("wire-other");
    write(
        &other,
        PROTO,
        &edited(&[("string note = 3;", "string note = 42;")]),
    );
    git(&other, &["commit", "-q", "-am", "other"]);
    let dir = repo("wire-redirect");
    write(
        &dir,
        PROTO,
        &edited(&[("int64 amount = 2;", "string amount = 2;")]),
    );
    let git_dir = other.join(".git").to_string_lossy().into_owned();
    let work_tree = other.to_string_lossy().into_owned();
    let mut s = start(
        &dir,
        &[
            ("GIT_DIR", &git_dir),
            ("GIT_WORK_TREE", &work_tree),
            ("GIT_INDEX_FILE", "/nonexistent/index"),
        ],
    );
    let (is_error, out) = analyze(&mut s, 2, json!({"target": PROTO, "base": "main"}));
    assert!(!is_error, "{out}");
    // Compared with this repository's main (BASE), not the other's (note = 42).
    assert_eq!(
        findings(&out).0,
        ["incompatible type change: `Order.amount` #2"],
        "{out}"
    );
}
