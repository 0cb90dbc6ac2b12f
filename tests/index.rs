//! The index core through its library API: determinism of the fingerprint across runs, thread
//! counts and file orders; incremental updates equal to a full rebuild under random edits;
//! malformed sources that never crash or hang.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::temp_dir;
use mesh_mcp::IndexHandle;
use mesh_mcp::Indexer;
use mesh_mcp::zero_config;

/// A tiny deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn source(ext: &str, i: u64) -> String {
    match ext {
        "rs" => format!(
            "pub struct Service{i} {{ name: String }}\nimpl Service{i} {{\n    pub fn handle_{i}(&self) -> u32 {{ {i} }}\n}}\n"
        ),
        "go" => format!(
            "package pkg{i}\n\ntype Handler{i} struct{{ Name string }}\n\nfunc NewHandler{i}() *Handler{i} {{ return &Handler{i}{{}} }}\n"
        ),
        "py" => format!("class Worker{i}:\n    def handle(self, payload):\n        return {i}\n"),
        "ts" => format!(
            "export class Component{i} {{\n  handle(input: string): string {{ return input; }}\n}}\n"
        ),
        "java" => format!(
            "package pkg{i};\n\npublic class Handler{i} {{\n    public void handle(String s) {{}}\n}}\n"
        ),
        "proto" => format!(
            "syntax = \"proto3\";\npackage svc{i};\nservice Svc{i} {{ rpc Get{i}(Req{i}) returns (Res{i}); }}\nmessage Req{i} {{ string id = 1; }}\nmessage Res{i} {{ string id = 1; }}\n"
        ),
        "md" => format!("# Service {i}\n\nSome text.\n\n## Configuration\n\nMore text {i}.\n"),
        _ => format!("server:\n  port: {i}\nspring:\n  datasource:\n    password: secret-{i}\n"),
    }
}

const EXTS: [&str; 8] = ["rs", "go", "py", "ts", "java", "proto", "md", "yml"];

fn write_tree(dir: &Path, files: u64, rng: &mut Rng) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for i in 0..files {
        let svc = rng.below(4);
        let ext = EXTS[(i % EXTS.len() as u64) as usize];
        let sub = if rng.below(3) == 0 { "src/deep" } else { "src" };
        let path = dir.join(format!("services/svc-{svc}/{sub}/gen_{i}.{ext}"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, source(ext, i)).unwrap();
        paths.push(path);
    }
    for svc in 0..4 {
        let manifest = dir.join(format!("services/svc-{svc}/Cargo.toml"));
        std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
        std::fs::write(manifest, "[package]\nname = \"x\"\n").unwrap();
    }
    paths
}

fn fingerprint(dir: &Path, threads: usize, shuffle: Option<u64>) -> String {
    let config = Arc::new(zero_config(dir));
    let mut indexer = Indexer::new(config, IndexHandle::new()).with_threads(threads);
    if let Some(seed) = shuffle {
        indexer = indexer.with_shuffled_order(seed);
    }
    indexer.rebuild().fingerprint()
}

#[test]
fn fingerprint_is_identical_across_runs_threads_and_orders() {
    let dir = temp_dir("determinism");
    write_tree(&dir, 400, &mut Rng(0x5eed));
    let reference = fingerprint(&dir, 1, None);
    for run in 0..3 {
        assert_eq!(
            fingerprint(&dir, 1, None),
            reference,
            "sequential run {run}"
        );
    }
    for threads in [2, 3, 8] {
        for seed in [1u64, 99, 12345] {
            assert_eq!(
                fingerprint(&dir, threads, Some(seed)),
                reference,
                "{threads} threads, order seed {seed}"
            );
        }
    }
    // The checkout directory does not matter either.
    let copy = temp_dir("determinism-copy");
    write_tree(&copy, 400, &mut Rng(0x5eed));
    assert_eq!(fingerprint(&copy, 2, None), reference);
}

#[test]
fn incremental_updates_equal_a_full_rebuild_under_random_edits() {
    let dir = temp_dir("incremental");
    let mut rng = Rng(0x5eed_0002);
    let mut live = write_tree(&dir, 120, &mut rng);
    let config = Arc::new(zero_config(&dir));
    let mut incremental = Indexer::new(config.clone(), IndexHandle::new()).with_threads(2);
    incremental.rebuild();
    let mut next_id = 10_000u64;
    for step in 0..40 {
        let mut touched = Vec::new();
        for _ in 0..1 + rng.below(4) {
            match rng.below(4) {
                0 if !live.is_empty() => {
                    // edit: append a declaration
                    let p = &live[rng.below(live.len() as u64) as usize];
                    let mut text = std::fs::read_to_string(p).unwrap_or_default();
                    text.push_str(&source(p.extension().unwrap().to_str().unwrap(), next_id));
                    next_id += 1;
                    std::fs::write(p, text).unwrap();
                    touched.push(p.clone());
                }
                1 => {
                    // create
                    let ext = EXTS[rng.below(EXTS.len() as u64) as usize];
                    let p = dir.join(format!(
                        "services/svc-{}/src/new_{next_id}.{ext}",
                        rng.below(4)
                    ));
                    std::fs::write(&p, source(ext, next_id)).unwrap();
                    next_id += 1;
                    touched.push(p.clone());
                    live.push(p);
                }
                2 if !live.is_empty() => {
                    // delete
                    let p = live.swap_remove(rng.below(live.len() as u64) as usize);
                    std::fs::remove_file(&p).unwrap();
                    touched.push(p);
                }
                _ if !live.is_empty() => {
                    // rename (possibly into another service)
                    let p = live.swap_remove(rng.below(live.len() as u64) as usize);
                    let to = dir.join(format!(
                        "services/svc-{}/src/moved_{next_id}.{}",
                        rng.below(4),
                        p.extension().unwrap().to_str().unwrap()
                    ));
                    next_id += 1;
                    std::fs::rename(&p, &to).unwrap();
                    touched.push(p);
                    touched.push(to.clone());
                    live.push(to);
                }
                _ => {}
            }
        }
        let inc = incremental.apply_changes(&touched).fingerprint();
        let full = Indexer::new(config.clone(), IndexHandle::new())
            .rebuild()
            .fingerprint();
        assert_eq!(
            inc, full,
            "step {step}: incremental differs from a full rebuild after {touched:?}"
        );
    }
}

#[test]
fn malformed_sources_never_crash_or_hang() {
    let dir = temp_dir("malformed");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("unterminated.rs"),
        "fn a() { let s = \"never closed;\n/* and a comment",
    )
    .unwrap();
    std::fs::write(
        src.join("unterminated.py"),
        "def f():\n    s = '''never closed\n",
    )
    .unwrap();
    std::fs::write(src.join("deep.ts"), "{\n".repeat(10_000)).unwrap();
    std::fs::write(
        src.join("deep.go"),
        format!(
            "package x\nfunc f() {}{}\n",
            "(\n".repeat(10_000),
            ")\n".repeat(10_000)
        ),
    )
    .unwrap();
    std::fs::write(src.join("minified.js"), "var a=1;".repeat(125_000)).unwrap();
    let mut junk = vec![0u8; 4096];
    for (i, b) in junk.iter_mut().enumerate() {
        *b = (i * 7 % 256) as u8;
    }
    std::fs::write(src.join("junk.java"), &junk).unwrap();
    std::fs::write(src.join("latin1.py"), b"# caf\xe9\nx = 1\n").unwrap();
    std::fs::write(src.join("deep.proto"), "message A {\n".repeat(5_000)).unwrap();
    std::fs::write(
        src.join("deep.yaml"),
        (0..5000)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i % 60)))
            .collect::<String>(),
    )
    .unwrap();
    let config = Arc::new(zero_config(&dir));
    let snap = Indexer::new(config, IndexHandle::new()).rebuild();
    let reasons: Vec<(String, &str)> = snap
        .rejected
        .iter()
        .map(|r| (r.path.clone(), r.label))
        .collect();
    assert!(
        reasons.contains(&("src/minified.js".into(), "oversized"))
            || reasons.contains(&("src/minified.js".into(), "long line")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|(p, l)| p == "src/junk.java" && *l == "binary"),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|(p, l)| p == "src/latin1.py" && *l == "not UTF-8"),
        "{reasons:?}"
    );
    for name in [
        "unterminated.rs",
        "unterminated.py",
        "deep.ts",
        "deep.go",
        "deep.proto",
        "deep.yaml",
    ] {
        assert!(
            snap.files.iter().any(|f| f.path.ends_with(name)),
            "{name} not indexed: {reasons:?}"
        );
    }
}

#[test]
fn custom_patterns_find_in_house_event_buses() {
    let dir = temp_dir("patterns");
    std::fs::write(
        dir.join("mesh-mcp.toml"),
        "[workspace]\nroots = [\".\"]\n\n[[patterns]]\nname = \"outbox\"\nkind = \"producer\"\nfiles = \"*.ts\"\nregex = 'outbox\\.publish\\(\\s*\"([^\"]+)\"'\n\n[[patterns]]\nname = \"broken\"\nkind = \"consumer\"\nregex = '([unclosed'\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/ship.ts"),
        "export class Ship {}\n\noutbox.publish(\"orders.shipped\", payload);\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/other.py"),
        "outbox.publish(\"not.matched.by.glob\")\n",
    )
    .unwrap();
    let config = Arc::new(mesh_mcp::discover(&dir, None).expect("config"));
    let snap = Indexer::new(config, IndexHandle::new()).rebuild();
    let g = &snap.graph;
    let names: Vec<&str> = g.topics.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["orders.shipped"]);
    let ev = &g.events[0];
    assert_eq!((ev.via.as_str(), ev.at.line), ("outbox", 3));
    assert_eq!(&*snap.files[ev.at.file as usize].path, "src/ship.ts");
}
