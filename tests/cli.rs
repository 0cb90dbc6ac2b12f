//! The command line, driven as a person would: `--help`, `--version`, `demo`.

use std::process::Command;

fn mesh(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
        .args(args)
        .env("HOME", std::env::temp_dir())
        .output()
        .expect("run mesh-mcp")
}

#[test]
fn version_and_help() {
    let out = mesh(&["--version"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(env!("CARGO_PKG_VERSION")));
    let out = mesh(&["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: mesh-mcp"));
    let out = mesh(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown command"));
    let out = Command::new(env!("CARGO_BIN_EXE_meshd"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn demo_runs_a_scripted_session_on_the_bundled_example() {
    let out = mesh(&["demo"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("\"method\":\"initialize\""), "{stderr}");
    assert!(stderr.contains("← tools:"), "{stderr}");
    assert!(stderr.contains("## Index status"), "{stderr}");
    assert!(out.stdout.is_empty(), "demo wrote to stdout");
}

#[test]
fn demo_names_a_missing_workspace() {
    let out = mesh(&["demo", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is missing"));
}
