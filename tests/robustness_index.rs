//! Robustness of indexing and of the files the CLI reads or writes, through the real binary:
//! hostile file kinds as config (`/dev/zero`, a FIFO), hostile workspace files (invalid UTF-8,
//! NUL bytes, a 10 MB single line, old-Mac line ends) and `init` next to symlinks leading out
//! of the workspace. Each run is bounded: a hang is a failure, never a stuck test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mesh-robust-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir.canonicalize().unwrap())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs mesh-mcp in `dir` with a private HOME, audit database and socket directory, killing
/// it (and failing) if it has not finished within `limit`.
fn mesh_in(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let home = dir.join(".home");
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("MESH_AUDIT_DB", home.join("audit.db"))
        .env("MESH_SOCKET_PATH", home.join("sock"))
        .env_remove("MESH_LOG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mesh-mcp");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "mesh-mcp {args:?} did not finish within {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn a_device_or_fifo_as_config_is_refused_at_once_naming_the_path() {
    let dir = Scratch::new("config");
    let fifo = dir.0.join("pipe.toml");
    let mut cases = vec![("/dev/zero".to_string(), "is a device")];
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        cases.push((fifo.display().to_string(), "is a FIFO (named pipe)"));
    }
    for (path, want) in cases {
        let out = mesh_in(
            &dir.0,
            &["graph", "--format", "fingerprint", "--config", &path],
            LIMIT,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{path}: {stderr}");
        assert!(
            stderr.contains(&path) && stderr.contains(want) && stderr.contains("--config"),
            "{path}: {stderr}"
        );
    }
}

#[test]
fn hostile_files_are_listed_as_rejected_and_never_stall_the_index() {
    let dir = Scratch::new("files");
    let ws = dir.0.join("ws");
    let src = ws.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("good.go"),
        "package good\n\ntype GoodService struct{}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("latin1.go"),
        b"package x\n// caf\xe9\ntype Latin struct{}\n",
    )
    .unwrap();
    std::fs::write(src.join("nul.py"), b"class Nul:\n    pass\n\0\0\0\n").unwrap();
    // 10 MB on one line: over the size limit (and the long-line guard).
    let mut huge = b"export const x = \"".to_vec();
    huge.resize(10 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\";\n");
    std::fs::write(src.join("huge.ts"), &huge).unwrap();
    // Just under the size limit, one line: the long-line guard.
    let mut long = b"export const y = \"".to_vec();
    long.resize(300 * 1024, b'b');
    long.extend_from_slice(b"\";\n");
    std::fs::write(src.join("long.ts"), &long).unwrap();
    // Long lines where they are allowed, up to the size limits: extracted, in bounded time.
    let docs = ws.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let one_line = |head: &str, len: usize, fill: u8| {
        let mut v = head.as_bytes().to_vec();
        v.resize(len, fill);
        v.push(b'\n');
        v
    };
    std::fs::write(
        docs.join("openapi.yaml"),
        one_line("openapi: ", 1400 * 1024, b'x'),
    )
    .unwrap();
    std::fs::write(
        docs.join("README.md"),
        one_line("# Title ", 380 * 1024, b'['),
    )
    .unwrap();
    std::fs::write(
        docs.join("app.properties"),
        one_line("a.b=", 380 * 1024, b'\\'),
    )
    .unwrap();
    // NUL bytes past the binary sniff: the extractor sees them and copes.
    let mut late_nul = b"package late\n\ntype LateNul struct{}\n// ".to_vec();
    late_nul.resize(5000, b' ');
    late_nul.extend_from_slice(b"\0\0\0 \"\0\n");
    std::fs::write(src.join("late_nul.go"), &late_nul).unwrap();
    // Old-Mac line ends: indexed, with real line numbers.
    let proto =
        "syntax = \"proto3\";\rpackage acme.v1;\r// c\rmessage OldMac {\r  string id = 1;\r}\r";
    std::fs::write(src.join("oldmac.proto"), proto).unwrap();

    let out = mesh_in(&ws, &["query", "index_status"], LIMIT);
    let status = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{status}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (file, reason) in [
        ("latin1.go", "UTF-8"),
        ("nul.py", "binary"),
        ("huge.ts", "oversized"),
        ("long.ts", "line"),
    ] {
        let line = status
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file} not listed:\n{status}"));
        assert!(
            line.to_ascii_lowercase()
                .contains(&reason.to_ascii_lowercase()),
            "{file}: {line}"
        );
    }
    let out = mesh_in(
        &ws,
        &["query", "smart_search", r#"{"query":"OldMac"}"#],
        LIMIT,
    );
    let found = String::from_utf8_lossy(&out.stdout);
    assert!(found.contains("oldmac.proto:4"), "{found}");
    let out = mesh_in(
        &ws,
        &["query", "smart_search", r#"{"query":"GoodService"}"#],
        LIMIT,
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("good.go:3"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn init_never_writes_through_a_symlink_out_of_the_workspace() {
    use std::os::unix::fs::symlink;
    let dir = Scratch::new("init");
    let ws = dir.0.join("ws");
    let outside = dir.0.join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("CLAUDE.md"), "outside\n").unwrap();
    symlink(outside.join("CLAUDE.md"), ws.join("CLAUDE.md")).unwrap();
    symlink(&outside, ws.join(".vscode")).unwrap();
    let out = mesh_in(&ws, &["init", "--write-ide-config"], LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("CLAUDE.md is a symlink to") && stderr.contains("outside the workspace"),
        "{stderr}"
    );
    assert!(stderr.contains(".vscode is a symlink to"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(outside.join("CLAUDE.md")).unwrap(),
        "outside\n"
    );
    assert!(!outside.join("mcp.json").exists());
    // What is inside was written as usual.
    assert!(ws.join("AGENTS.md").is_file() && ws.join(".mcp.json").is_file());
}

/// A config whose keys and values are 100 KB each: every error names the problem and echoes
/// the offending text bounded (its first characters and its size), never whole.
#[test]
fn config_errors_echo_huge_keys_and_values_bounded() {
    let s = Scratch::new("cfg-echo");
    std::fs::create_dir_all(s.0.join(".agents")).unwrap();
    std::fs::create_dir_all(s.0.join("svc")).unwrap();
    std::fs::write(s.0.join("svc/a.go"), "package a\n").unwrap();
    let k = "k".repeat(100_000);
    for (config, says) in [
        (format!("[{k}]\n"), "unknown section or key"),
        (format!("[workspace]\n{k} = 1\n"), "unknown key"),
        (format!("{k} = 1\n{k} = 2\n"), "duplicate key"),
        (format!("a = 9{}\n", "9".repeat(100_000)), "does not fit"),
        (
            format!("[workspace]\nroots = \"{k}\"\n"),
            "expected an array",
        ),
        (
            format!("[workspace]\nroots = [\"{k}\"]\n"),
            "matches no directory",
        ),
        (
            format!("[workspace]\nroots = [\"${{{}}}\"]\n", k.to_uppercase()),
            "is not set",
        ),
    ] {
        std::fs::write(s.0.join(".agents/mesh-mcp.toml"), &config).unwrap();
        let out = mesh_in(&s.0, &["query", "index_status"], Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{says}: {err:.300}");
        assert!(err.contains(says), "{says}: {err:.300}");
        assert!(err.len() < 1000, "{says}: {} bytes: {err:.300}", err.len());
        assert!(err.contains("bytes)"), "{says}: says the size: {err:.300}");
    }
}
