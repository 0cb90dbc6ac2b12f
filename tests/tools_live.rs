//! Acceptance tests of issue 5 that change files, each on its own copy of a workspace, through
//! the real binary: `smart_search` never cites a wrong line while the watcher catches up with
//! an edit, masks quoted secrets in snippets (and only those), and the path jail refuses a
//! sibling that merely shares the workspace's name prefix and a symlink out of the roots.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Session, example_copy, temp_dir};
use serde_json::json;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every `path:line` a `smart_search` answer cites, with the snippet's first line.
fn cited(text: &str) -> Vec<(String, u32, u32)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("### ["))
        .map(|rest| {
            let at = rest.split('`').nth(1).unwrap();
            let (path, line) = at.rsplit_once(':').unwrap();
            let first = rest.split("(L").nth(1).unwrap().split('-').next().unwrap();
            (
                path.to_string(),
                line.parse().unwrap(),
                first.parse().unwrap(),
            )
        })
        .collect()
}

/// Waits until the index has published a generation after `generation`.
fn wait_past(s: &mut Session, generation: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let g = s.generation();
        if g > generation {
            return g;
        }
        assert!(
            Instant::now() < deadline,
            "the watcher never published after generation {generation}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The line numbers (1-based) of `text` holding `needle`.
fn lines_with(text: &str, needle: &str) -> Vec<u32> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Asserts that every entry `text` cites for function `name` is in main.go, on the line that
/// declares it now.
fn cites_only_the_declaration(text: &str, main_go: &Path, name: &str, when: &str) {
    let now = std::fs::read_to_string(main_go).unwrap();
    let decl = lines_with(&now, &format!("func {name}("));
    for (path, line, first) in cited(text) {
        assert_eq!(path, "services/orders/main.go", "{text}");
        assert_eq!(
            vec![line],
            decl,
            "{when}: cites main.go:{line} ({:?}) for function {name}:\n{text}",
            now.lines().nth(line as usize - 1)
        );
        assert!(first <= line, "{text}");
    }
}

#[test]
fn search_never_cites_a_wrong_line_while_the_index_catches_up() {
    let ws = example_copy("live-stale");
    let main_go = ws.join("services/orders/main.go");
    let mut s = Session::start(&ws);
    let args = json!({"query": "getenv", "kind": "function", "scope": "services/orders"});
    let text = s.ok("smart_search", args.clone());
    assert_eq!(
        cited(&text),
        [("services/orders/main.go".to_string(), 21, 21)],
        "{text}"
    );
    // Lines inserted above the declaration: the old anchor now holds a *call* of getenv
    // (`var ordersTopic = getenv(…)`), then other lines. Asked right after the edit (the
    // watcher may or may not have caught up) and until it has, the answer cites the line
    // that declares getenv, or nothing — never a stale line.
    for round in 1..=4u32 {
        let generation = s.generation();
        let mut src = std::fs::read_to_string(&main_go).unwrap();
        src.insert_str(
            0,
            &"// inserted above the package clause\n".repeat(round as usize),
        );
        std::fs::write(&main_go, &src).unwrap();
        let when = format!("round {round}");
        let text = s.ok("smart_search", args.clone());
        cites_only_the_declaration(&text, &main_go, "getenv", &when);
        wait_past(&mut s, generation);
        s.wait_for(
            &format!("{when}: the index to catch up"),
            "smart_search",
            args.clone(),
            |text| {
                cites_only_the_declaration(text, &main_go, "getenv", &when);
                cited(text).len() == 1 && !text.contains("the file changed since indexing")
            },
        );
    }
    // Renamed away: right after the edit the old name is dropped; once caught up, nothing
    // declares it and the new name is found.
    let src = std::fs::read_to_string(&main_go)
        .unwrap()
        .replace("getenv(", "readEnv(");
    std::fs::write(&main_go, &src).unwrap();
    let text = s.ok("smart_search", args.clone());
    assert!(
        cited(&text).is_empty(),
        "a renamed declaration is still cited:\n{text}"
    );
    s.wait_for(
        "the rename to be indexed",
        "smart_search",
        args.clone(),
        |text| {
            assert!(
                cited(text).is_empty(),
                "a renamed declaration is cited:\n{text}"
            );
            text.contains("No declaration named like `getenv`")
        },
    );
    let new_args = json!({"query": "readEnv", "kind": "function"});
    s.wait_for("readEnv to be indexed", "smart_search", new_args, |text| {
        cites_only_the_declaration(text, &main_go, "readEnv", "after the rename");
        cited(text).len() == 1 && !text.contains("the file changed since indexing")
    });
    // A deleted file is never cited.
    let generation = s.generation();
    std::fs::remove_file(ws.join("services/orders/store.go")).unwrap();
    let text = s.ok("smart_search", json!({"query": "orderStore"}));
    assert!(
        cited(&text)
            .iter()
            .all(|(p, _, _)| p != "services/orders/store.go"),
        "{text}"
    );
    wait_past(&mut s, generation);
}

#[test]
fn with_the_watcher_off_a_stale_index_is_corrected_at_answer_time() {
    // No watcher: the index stays at generation 1 whatever changes, so every answer below
    // comes from a stale index and must re-read the files.
    let ws = example_copy("live-nowatch");
    let mut s = Session::start_with(&ws, &[("MESH_WATCH", "off")]);
    let server_go = ws.join("services/orders/server.go");
    let args = json!({"query": "GetOrder", "kind": "method", "scope": "services/orders/server.go"});
    let text = s.ok("smart_search", args.clone());
    assert_eq!(
        cited(&text),
        [("services/orders/server.go".to_string(), 46, 45)],
        "{text}"
    );
    // Moved down by a doc comment that mentions it, and a call of it added above.
    let src = std::fs::read_to_string(&server_go).unwrap().replace(
        "func (s *orderServer) GetOrder(",
        "// GetOrder reads one order; see also s.GetOrder(ctx, req) in tests.\n// It never blocks.\nfunc (s *orderServer) GetOrder(",
    );
    std::fs::write(&server_go, &src).unwrap();
    let text = s.ok("smart_search", args.clone());
    let decl = lines_with(&src, "func (s *orderServer) GetOrder(")[0];
    let got = cited(&text);
    assert_eq!(got.len(), 1, "{text}");
    assert_eq!(
        got[0].1, decl,
        "the moved declaration is not cited at its line:\n{text}"
    );
    assert!(got[0].2 < decl, "its doc comment is not shown:\n{text}");
    assert!(text.contains("the file changed since indexing"), "{text}");
    assert!(text.contains("It never blocks."), "{text}");
    // Gone: renamed, and its file's sibling deleted.
    std::fs::write(&server_go, src.replace("GetOrder(", "FetchOrder(")).unwrap();
    let text = s.ok("smart_search", args.clone());
    assert!(cited(&text).is_empty(), "{text}");
    assert!(
        text.contains("1 hit(s) on this page were skipped: their files changed and no longer declare `GetOrder`"),
        "{text}"
    );
    std::fs::remove_file(ws.join("services/orders/store.go")).unwrap();
    let text = s.ok(
        "smart_search",
        json!({"query": "orderStore", "scope": "services/orders"}),
    );
    assert!(
        cited(&text)
            .iter()
            .all(|(p, _, _)| p != "services/orders/store.go"),
        "a deleted file is cited:\n{text}"
    );
    assert_eq!(s.generation(), 1, "the watcher was supposed to be off");
}

#[test]
fn snippets_mask_quoted_secrets_and_nothing_else() {
    let ws = std::fs::canonicalize(temp_dir("live-mask")).unwrap();
    write(
        &ws.join("package.json"),
        "{\"name\": \"mask-demo\", \"version\": \"1.0.0\"}\n",
    );
    write(
        &ws.join("src/secrets.ts"),
        r#"export enum TokenKind {
  REFRESH_TOKEN = 'refresh_token',
  ACCESS_TOKEN = "access_token",
}

export function buildSecrets(dto: Dto) {
  const password = 'hunter2-very-secret';
  let apiKey = "sk-live-0123456789";
  const user = { password: dto.password };
  const env = { "password": "DB_PASSWORD" };
  const ref = { token: "${API_TOKEN}" };
  const flags = { secret: true, private_key: false, auth_token: null };
  const opened = { "credentials": {
  } };
  return [user, env, ref, flags, password, apiKey, opened];
}
"#,
    );
    write(
        &ws.join("src/settings.py"),
        "class Settings:\n    \"\"\"Connection settings.\"\"\"\n    db_password = \"pg-Secret-42\"\n    db_user = \"shop\"\n    signing_key = os.environ[\"SIGNING_KEY\"]\n",
    );
    let mut s = Session::start(&ws);
    let text = s.ok(
        "smart_search",
        json!({"query": "buildSecrets", "include_body": true}),
    );
    const MASK: &str = "[REDACTED_SECRET: USE_ENV_OR_LOCAL_FALLBACK]";
    for secret in ["hunter2-very-secret", "sk-live-0123456789"] {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
    for masked in [
        format!("const password = {MASK};"),
        format!("let apiKey = {MASK};"),
    ] {
        assert!(text.contains(&masked), "missing {masked:?}:\n{text}");
    }
    for kept in [
        "const user = { password: dto.password };",
        "const env = { \"password\": \"DB_PASSWORD\" };",
        "const ref = { token: \"${API_TOKEN}\" };",
        "const flags = { secret: true, private_key: false, auth_token: null };",
        "const opened = { \"credentials\": {",
    ] {
        assert!(text.contains(kept), "{kept:?} was changed:\n{text}");
    }
    let text = s.ok("smart_search", json!({"query": "TokenKind"}));
    for kept in [
        "REFRESH_TOKEN = 'refresh_token',",
        "ACCESS_TOKEN = \"access_token\",",
    ] {
        assert!(
            text.contains(kept),
            "an enum member whose value is its own name was masked ({kept:?}):\n{text}"
        );
    }
    let text = s.ok(
        "smart_search",
        json!({"query": "Settings", "include_body": true}),
    );
    assert!(!text.contains("pg-Secret-42"), "{text}");
    assert!(text.contains(&format!("db_password = {MASK}")), "{text}");
    assert!(text.contains("db_user = \"shop\""), "{text}");
    assert!(
        text.contains("signing_key = os.environ[\"SIGNING_KEY\"]"),
        "{text}"
    );
    // Fuzzy lines are masked too.
    let text = s.ok("smart_search", json!({"query": "hunter2", "fuzzy": true}));
    assert!(!text.contains("hunter2-very-secret"), "{text}");
}

#[test]
fn scopes_sharing_the_workspace_prefix_or_escaping_by_symlink_are_refused() {
    let ws = example_copy("live-jail");
    let parent = ws.parent().unwrap().to_path_buf();
    // A sibling whose name extends the workspace's, and a symlink from a root to it.
    write(
        &parent.join("polyglot-shop-evil/secret.go"),
        "package evil\n\nfunc OrderLeak() {}\n",
    );
    std::os::unix::fs::symlink(
        parent.join("polyglot-shop-evil"),
        ws.join("services/orders/evil-link"),
    )
    .unwrap();
    let mut s = Session::start(&ws);
    let evil = parent.join("polyglot-shop-evil");
    for scope in [
        evil.to_str().unwrap().to_string(),
        "../polyglot-shop-evil".to_string(),
        "services/orders/../../../polyglot-shop-evil".to_string(),
        "services/orders/evil-link".to_string(),
        format!("{}/", evil.display()),
    ] {
        let text = s.err(
            "smart_search",
            json!({"query": "OrderLeak", "scope": scope}),
        );
        assert!(
            text.contains("allowed scopes") && text.contains("`services/orders`"),
            "scope {scope:?}: {text}"
        );
        assert!(!text.contains("secret.go"), "{text}");
    }
    // The evil file is never indexed, so no scope or fuzzy search reaches it.
    let text = s.ok("smart_search", json!({"query": "OrderLeak", "fuzzy": true}));
    assert!(!text.contains("secret.go"), "{text}");
    let text = s.ok("smart_search", json!({"query": "OrderLeak"}));
    assert!(text.contains("No declaration named like"), "{text}");
}
