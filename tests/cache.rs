//! The persistent fact cache never changes results: a snapshot built cold, warm, after files
//! changed between runs (including a same-size edit with the mtime put back), from a damaged
//! cache file, or after the custom patterns changed, has the fingerprint of a build without
//! any cache. Through the binary: `MESH_CACHE=on` writes the per-workspace file (`0600`) and
//! answers the same; `MESH_CACHE=off` writes nothing.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::{Server, temp_dir, tool_text};
use mesh_mcp::Indexer;
use mesh_mcp::{Config, discover};
use mesh_mcp::{FactCache, cache_salt, cache_workspace_id};
use mesh_mcp::{IndexHandle, Snapshot};
use serde_json::json;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn workspace(tag: &str) -> PathBuf {
    let dir = std::fs::canonicalize(temp_dir(tag)).unwrap();
    write(
        &dir.join("mesh-mcp.toml"),
        "[workspace]\nroots = [\"services/*\"]\n\n[[patterns]]\nname = \"outbox\"\nkind = \"producer\"\nregex = 'outbox\\.publish\\(\"([^\"]+)\"'\n",
    );
    for svc in 0..3 {
        for i in 0..20 {
            let base = dir.join(format!("services/svc-{svc}"));
            write(
                &base.join(format!("proto/s{i}.proto")),
                &format!(
                    "syntax = \"proto3\";\npackage svc{svc}.v{i};\nservice Svc{i} {{ rpc Get{i}(Req{i}) returns (Res{i}); }}\nmessage Req{i} {{ string id = 1; }}\nmessage Res{i} {{ string id = 1; }}\n// outbox.publish(\"topic-{svc}-{i}\")\n"
                ),
            );
        }
        write(
            &dir.join(format!("services/svc-{svc}/README.md")),
            &format!("# Service {svc}\n\nIt serves.\n\n## Configuration\n\nSet `x`.\n"),
        );
        write(
            &dir.join(format!("services/svc-{svc}/application.yml")),
            &format!("server:\n  port: 80{svc}0\nspring:\n  datasource:\n    password: s3cret\n"),
        );
        write(
            &dir.join(format!("services/svc-{svc}/app.properties")),
            "spring.application.name=x\napi.key=abc\n",
        );
    }
    dir
}

fn config(dir: &Path) -> Arc<Config> {
    Arc::new(discover(dir, None).expect("config"))
}

fn uncached(config: &Arc<Config>) -> Snapshot {
    Indexer::new(config.clone(), IndexHandle::new()).rebuild()
}

/// Builds with the cache at `db` and flushes it; returns the snapshot and (hits, misses).
fn cached(config: &Arc<Config>, db: &Path) -> (Snapshot, u64, u64) {
    let cache = Arc::new(FactCache::open(db, &cache_salt(config), 64 << 20).expect("cache opens"));
    let mut indexer = Indexer::new(config.clone(), IndexHandle::new()).with_cache(cache.clone());
    let snap = indexer.rebuild();
    indexer.flush_cache();
    let s = cache.stats();
    (snap, s.hits, s.misses)
}

#[test]
fn a_warm_cache_never_changes_the_snapshot() {
    let dir = workspace("cache-equal");
    let db = temp_dir("cache-db").join("index/ws.db");
    let config = config(&dir);
    let reference = uncached(&config);
    let files = reference.files.len() as u64;
    assert!(files >= 60, "{files}");
    assert!(
        !reference.graph.topics.is_empty(),
        "the custom pattern found topics"
    );

    let (cold, hits, misses) = cached(&config, &db);
    assert_eq!(cold.fingerprint(), reference.fingerprint());
    assert_eq!((hits, misses), (0, files));
    let (warm, hits, misses) = cached(&config, &db);
    assert_eq!(warm.fingerprint(), reference.fingerprint());
    assert_eq!(
        (hits, misses),
        (files, 0),
        "every file comes from the cache"
    );

    // Change files between runs: a same-size edit with the old mtime put back (only the
    // content hash can tell), a deletion, an addition and a rename.
    let edited = dir.join("services/svc-0/proto/s3.proto");
    let before = std::fs::metadata(&edited).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, text.replace("Svc3", "Zzz3")).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&edited)
        .unwrap()
        .set_modified(before)
        .unwrap();
    std::fs::remove_file(dir.join("services/svc-1/proto/s4.proto")).unwrap();
    write(
        &dir.join("services/svc-2/proto/new.proto"),
        "syntax = \"proto3\";\nmessage Fresh {}\n",
    );
    std::fs::rename(
        dir.join("services/svc-2/proto/s5.proto"),
        dir.join("services/svc-2/proto/s5-renamed.proto"),
    )
    .unwrap();
    let reference = uncached(&config);
    let (after, hits, misses) = cached(&config, &db);
    assert_eq!(after.fingerprint(), reference.fingerprint());
    assert_eq!(misses, 3, "the edit, the new file and the renamed file");
    assert_eq!(hits, reference.files.len() as u64 - 3);
    assert!(
        after.graph.contracts.iter().any(|c| c.name == "Zzz3"),
        "the same-size edit is seen"
    );

    // A damaged file is rebuilt, not fatal, and still answers the same.
    std::fs::write(&db, vec![0xA5u8; 16384]).unwrap();
    let (rebuilt, hits, _) = cached(&config, &db);
    assert_eq!(rebuilt.fingerprint(), reference.fingerprint());
    assert_eq!(hits, 0);
    let (warm, hits, _) = cached(&config, &db);
    assert_eq!(warm.fingerprint(), reference.fingerprint());
    assert_eq!(hits, reference.files.len() as u64);

    // Other custom patterns extract other facts: the cache starts over.
    std::fs::write(
        dir.join("mesh-mcp.toml"),
        "[workspace]\nroots = [\"services/*\"]\n",
    )
    .unwrap();
    let config = self::config(&dir);
    let reference = uncached(&config);
    let (changed, hits, _) = cached(&config, &db);
    assert_eq!(changed.fingerprint(), reference.fingerprint());
    assert_eq!(hits, 0, "a pattern change invalidates every row");
    assert!(reference.graph.topics.is_empty());
}

#[test]
fn the_binary_uses_the_cache_only_when_asked_and_answers_the_same() {
    let dir = workspace("cache-bin");
    let id = cache_workspace_id(&dir);
    let ask = |env: &[(&str, &str)], home: Option<&Path>| -> (String, PathBuf) {
        let mut env = env.to_vec();
        let home_str = home.map(|h| h.to_str().unwrap().to_string());
        if let Some(h) = &home_str {
            env.push(("HOME", h.as_str()));
        }
        let mut s = Server::start_with(&dir, &env);
        let used_home = home.map_or_else(|| s.home.clone(), Path::to_path_buf);
        s.call(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        let resp = s.call(
            2,
            "tools/call",
            json!({"name": "smart_search", "arguments": {"query": "Req1"}}),
        );
        let text = tool_text(&resp).to_string();
        let _ = s.finish(Duration::from_secs(10));
        (text, used_home)
    };
    let home = temp_dir("cache-home");
    let db = home.join(format!(".cache/mesh-mcp/index/{id}.db"));
    let (first, _) = ask(&[("MESH_CACHE", "on")], Some(&home));
    assert!(db.is_file(), "MESH_CACHE=on writes {}", db.display());
    let mode = std::fs::metadata(&db).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let (second, _) = ask(&[("MESH_CACHE", "on")], Some(&home));
    assert_eq!(first, second);
    assert!(first.contains("Req1"), "{first}");

    let (third, off_home) = ask(&[("MESH_CACHE", "off")], None);
    assert_eq!(first, third);
    assert!(
        !off_home.join(".cache/mesh-mcp/index").exists(),
        "MESH_CACHE=off writes no cache"
    );
}

#[test]
fn a_reload_finds_earlier_content_in_the_cache() {
    let dir = workspace("cache-reload");
    // Age every file, so only the file this test touches is re-read by later builds
    // (files written moments before a build are re-read on purpose: see `Indexer`).
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    let mut work = vec![dir.clone()];
    while let Some(d) = work.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                work.push(e.path());
            } else {
                let f = std::fs::File::options().write(true).open(e.path()).unwrap();
                f.set_modified(hour_ago).unwrap();
            }
        }
    }
    // Setting the mtime is a status change: files changed just before a full read are read
    // again by the next one (their ctime is within the coarse-clock slack), which would add
    // cache hits of their own below.
    std::thread::sleep(Duration::from_millis(100));
    let db = temp_dir("cache-reload-db").join("ws.db");
    let config = config(&dir);
    let cache = Arc::new(FactCache::open(&db, &cache_salt(&config), 64 << 20).unwrap());
    let mut indexer = Indexer::new(config.clone(), IndexHandle::new()).with_cache(cache.clone());
    indexer.rebuild();
    indexer.flush_cache();
    let file = dir.join("services/svc-1/proto/s7.proto");
    let original = std::fs::read_to_string(&file).unwrap();
    // Switch to other content and back (a branch switch and its undo): the way back is a
    // cache hit through the per-file lookup, and the result equals a cache-less build.
    std::fs::write(&file, original.replace("Svc7", "Other7")).unwrap();
    indexer.rebuild();
    indexer.flush_cache();
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&file, &original).unwrap();
    let hits_before = cache.stats().hits;
    let snap = indexer.rebuild();
    assert_eq!(cache.stats().hits, hits_before + 1);
    assert_eq!(snap.fingerprint(), uncached(&config).fingerprint());
}
