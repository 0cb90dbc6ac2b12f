//! `mesh-mcp demo`: index the bundled example workspace and run a scripted session through the
//! real stdio server (this binary, spawned as a subprocess), printing each request and the
//! Markdown answer. It is the README's "run the main job" command.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The questions asked of the bundled example, in order; calls to tools this build does not
/// serve are skipped. Any other workspace gets questions taken from its own index
/// ([`questions`]).
const SCRIPT: &[(&str, &str)] = &[
    ("smart_search", r#"{"query": "OrderService", "limit": 3}"#),
    (
        "find_dependents",
        r#"{"target": "github.com/acme/shop/orders/gen/orderspb"}"#,
    ),
    (
        "analyze_grpc",
        r#"{"target": "InventoryService.ReserveStock"}"#,
    ),
    (
        "analyze_impact",
        r#"{"target": "orders.created", "depth": 2}"#,
    ),
    (
        "analyze_impact",
        r#"{"target": "GET /shipments/{orderId}"}"#,
    ),
    (
        "search_docs",
        r#"{"query": "kafka order events", "max_sections": 2}"#,
    ),
    ("visualize_mesh", r#"{"format": "mermaid"}"#),
    ("index_status", "{}"),
];

/// Questions for `snap`'s workspace taken from its own index: its most significant declaration
/// (the busiest gRPC service, else the first service-like declaration), its most-imported
/// package, its busiest RPC, topic and route, a doc query from the words its headings use
/// most, then the picture and the index status. A question with nothing to ask about (no
/// topics, no routes…) is left out.
pub fn questions(snap: &crate::index::snapshot::Snapshot) -> Vec<(&'static str, Value)> {
    use std::collections::BTreeMap;
    let g = &snap.graph;
    let mut out = Vec::new();
    // The busiest RPC (handlers + call sites), and its service.
    let mut rpc_use = vec![0usize; g.rpcs.len()];
    for l in g.handlers.iter().chain(&g.calls) {
        if let Some(n) = rpc_use.get_mut(l.rpc as usize) {
            *n += 1;
        }
    }
    let busiest_rpc = busiest(&rpc_use);
    let contract = busiest_rpc
        .and_then(|r| g.contracts.get(g.rpcs[r].contract as usize))
        .or_else(|| g.contracts.first());
    let declaration = contract
        .map(|c| c.name.clone())
        .or_else(|| central_declaration(snap));
    if let Some(name) = declaration {
        out.push(("smart_search", json!({"query": name, "limit": 3})));
    }
    // The package other roots import most; when no import crosses a root, the workspace's own
    // package most files import (one whose name a file of the workspace declares), and only
    // when it has none, the module most files import (a library's).
    let mut module_use: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &g.import_links {
        *module_use.entry(l.module.as_str()).or_default() += 1;
    }
    if module_use.is_empty() {
        let declared: std::collections::BTreeSet<&str> = snap
            .files
            .iter()
            .filter_map(|f| f.extra.as_ref()?.package.as_deref())
            .filter(|p| !p.is_empty())
            .collect();
        let mut own: BTreeMap<&str, usize> = BTreeMap::new();
        let mut any: BTreeMap<&str, usize> = BTreeMap::new();
        for f in snap.files.iter().filter(|f| !f.is_test && !f.generated) {
            let Some(extra) = &f.extra else { continue };
            let mut seen = std::collections::BTreeSet::new();
            for i in &extra.imports {
                if !seen.insert(i.module.as_str()) {
                    continue;
                }
                *any.entry(i.module.as_str()).or_default() += 1;
                if declares(&declared, &i.module) {
                    *own.entry(i.module.as_str()).or_default() += 1;
                }
            }
        }
        module_use = if own.is_empty() { any } else { own };
    }
    if let Some((module, _)) = module_use
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
    {
        out.push(("find_dependents", json!({"target": module})));
    }
    if let Some(r) = busiest_rpc.or(if g.rpcs.is_empty() { None } else { Some(0) }) {
        let rpc = &g.rpcs[r];
        let service = g
            .contracts
            .get(rpc.contract as usize)
            .map_or("", |c| c.name.as_str());
        out.push((
            "analyze_grpc",
            json!({"target": format!("{service}.{}", rpc.name)}),
        ));
    }
    let mut topic_use = vec![0usize; g.topics.len()];
    for e in &g.events {
        if let Some(n) = topic_use.get_mut(e.topic as usize) {
            *n += 1;
        }
    }
    if let Some(t) = busiest(&topic_use) {
        out.push((
            "analyze_impact",
            json!({"target": g.topics[t].name, "depth": 2}),
        ));
    }
    let mut route_use = vec![0usize; g.routes.len()];
    for c in &g.route_calls {
        if let Some(n) = route_use.get_mut(c.route as usize) {
            *n += 1;
        }
    }
    if let Some(r) = busiest(&route_use).or(if g.routes.is_empty() { None } else { Some(0) }) {
        let route = &g.routes[r];
        out.push((
            "analyze_impact",
            json!({"target": format!("{} {}", route.method, route.path)}),
        ));
    }
    if let Some(query) = heading_query(snap) {
        out.push(("search_docs", json!({"query": query, "max_sections": 2})));
    }
    out.push(("visualize_mesh", json!({"format": "mermaid"})));
    out.push(("index_status", json!({})));
    out
}

/// Whether `module` is, or lies inside, one of the `declared` packages or namespaces
/// (`com.acme.orders.OrderService` in `com.acme.orders`, `Acme\\Log\\X` in `Acme\\Log`).
fn declares(declared: &std::collections::BTreeSet<&str>, module: &str) -> bool {
    declared.iter().any(|p| {
        module == *p
            || module.strip_prefix(p).is_some_and(|rest| {
                rest.starts_with('.')
                    || rest.starts_with('\\')
                    || rest.starts_with("::")
                    || rest.starts_with('/')
            })
    })
}

/// The type-like declaration of hand-written code that the most other files import by name
/// (a module path ending in it, or a name imported from a module); on a tie, or when none is
/// imported, one of a service's root before one of a library or the workspace base, then the
/// kind that ranks first, then the first in path order.
fn central_declaration(snap: &crate::index::snapshot::Snapshot) -> Option<String> {
    use crate::index::facts::SymbolKind as K;
    let mut imported: std::collections::BTreeMap<&str, usize> = Default::default();
    for f in snap.files.iter().filter(|f| !f.is_test) {
        let Some(extra) = &f.extra else { continue };
        let mut seen = std::collections::BTreeSet::new();
        for i in &extra.imports {
            let last = i
                .module
                .rsplit(['.', '/', '\\', ':'])
                .next()
                .unwrap_or(&i.module);
            for name in std::iter::once(last).chain(i.names.iter().map(String::as_str)) {
                if !name.is_empty() && seen.insert(name) {
                    *imported.entry(name).or_default() += 1;
                }
            }
        }
    }
    let service_root = |root: u16| {
        snap.roots
            .get(root as usize)
            .is_some_and(|r| r.kind == crate::config::RootKind::Service)
    };
    snap.files
        .iter()
        .filter(|f| !f.is_test && !f.generated)
        .flat_map(|f| {
            f.symbols()
                .iter()
                .map(move |s| (s.kind, f.name(s), service_root(f.root)))
        })
        .filter(|(kind, _, _)| {
            matches!(
                kind,
                K::Service | K::Message | K::Interface | K::Trait | K::Class | K::Struct
            )
        })
        .enumerate()
        .min_by_key(|(order, (kind, name, service))| {
            let uses = imported.get(name).copied().unwrap_or(0);
            (std::cmp::Reverse(uses), !*service, *kind, *order)
        })
        .map(|(_, (_, name, _))| name.to_string())
}

/// The index of the largest count above zero (the first on a tie).
fn busiest(counts: &[usize]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 && best.is_none_or(|(_, b)| n > b) {
            best = Some((i, n));
        }
    }
    best.map(|(i, _)| i)
}

/// The two words the workspace's doc headings use most (four letters or more, not a filler
/// word), as a `search_docs` query.
fn heading_query(snap: &crate::index::snapshot::Snapshot) -> Option<String> {
    const FILLER: &[&str] = &[
        "with",
        "from",
        "that",
        "this",
        "your",
        "what",
        "when",
        "into",
        "about",
        "using",
        "table",
        "contents",
        "overview",
        "introduction",
        "readme",
        "license",
        "notes",
        "todo",
    ];
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for f in &snap.files {
        let Some(extra) = &f.extra else { continue };
        for s in &extra.sections {
            let mut seen = std::collections::BTreeSet::new();
            for w in s.title.split(|c: char| !c.is_alphanumeric()) {
                let w = w.to_lowercase();
                if w.chars().count() >= 4
                    && !w.chars().all(|c| c.is_ascii_digit())
                    && !FILLER.contains(&w.as_str())
                    && seen.insert(w.clone())
                {
                    *counts.entry(w).or_default() += 1;
                }
            }
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    crate::order::sort_by(&mut ranked, |a, b| {
        b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0))
    });
    let words: Vec<String> = ranked.into_iter().take(2).map(|(w, _)| w).collect();
    (!words.is_empty()).then(|| words.join(" "))
}

const USAGE: &str = "\
Usage: mesh-mcp demo [WORKSPACE]

Indexes the bundled example workspace (or WORKSPACE) and runs a scripted MCP session through the
real stdio server, printing each request and its Markdown answer on stdout. On a workspace
other than the example, the questions come from its own index: its busiest RPC, topic and
route, its most-imported package, and a doc query from its headings.

Exit status: 0 when every answer came back, 1 when the session failed (or the bundled example
is missing), 2 for bad usage (an unknown option, or a WORKSPACE that is not a directory).

Example: mesh-mcp demo
";

/// The bundled example workspace, found next to the sources this binary was built from.
pub fn example_workspace() -> PathBuf {
    std::env::var_os("MESH_DEMO_WORKSPACE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/examples/polyglot-shop"
            ))
        })
}

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let mut workspace = None;
    for a in args {
        match a.as_str() {
            "--help" | "-h" => {
                return super::print_stdout(USAGE);
            }
            other if other.starts_with('-') => {
                eprintln!("mesh-mcp demo: unknown option `{other}`. Try `mesh-mcp demo --help`.");
                return 2;
            }
            other if workspace.is_some() => {
                eprintln!(
                    "mesh-mcp demo: one workspace at a time, and `{other}` is a second. Try \
`mesh-mcp demo --help`."
                );
                return 2;
            }
            other => workspace = Some(PathBuf::from(other)),
        }
    }
    let given = workspace.is_some();
    let workspace = workspace.unwrap_or_else(example_workspace);
    if !workspace.is_dir() {
        if given {
            let what = if workspace.exists() {
                "is not a directory"
            } else {
                "does not exist"
            };
            // The argument is what the user must fix: a usage error, like an unknown option.
            eprintln!(
                "mesh-mcp demo: `{}` {what}; pass the directory of a workspace (`mesh-mcp demo \
path/to/workspace`), or no argument for the bundled example (`mesh-mcp demo`).",
                workspace.display()
            );
            return 2;
        } else {
            eprintln!(
                "mesh-mcp demo: the example workspace `{}` is missing. Run the demo from a clone \
of the repository, or pass a workspace directory: `mesh-mcp demo path/to/workspace`.",
                workspace.display()
            );
        }
        return 1;
    }
    match run(&workspace) {
        Ok(()) => 0,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("mesh-mcp demo: {e}");
            }
            1
        }
    }
}

/// The questions for `workspace`: the bundled example's script, or ones from its own index.
fn script_for(workspace: &std::path::Path) -> Result<Vec<(&'static str, Value)>, String> {
    if is_example(workspace) {
        return Ok(SCRIPT
            .iter()
            .map(|(t, a)| (*t, serde_json::from_str(a).unwrap_or_else(|_| json!({}))))
            .collect());
    }
    let config = crate::config::discover(workspace, None).map_err(|e| e.to_string())?;
    let handle = crate::index::snapshot::IndexHandle::new();
    let mut indexer = crate::index::Indexer::new(std::sync::Arc::new(config), handle);
    Ok(questions(&indexer.rebuild()))
}

/// `p` with symbolic links and `.` resolved, as given when that fails.
fn canonical(p: &std::path::Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// Whether `workspace` is the bundled example (which keeps its own script).
fn is_example(workspace: &std::path::Path) -> bool {
    canonical(workspace) == canonical(&example_workspace())
}

/// The transcript's closing lines: the commands a reader types next, written with `command`
/// (the name when `mesh-mcp` is on `PATH`, else this binary's path, so each line runs as
/// pasted), for `own` (the workspace the demo just asked, when it was not the example).
pub fn next_steps(command: &str, own: Option<&std::path::Path>, tools: usize) -> String {
    let quote = |p: &str| {
        if p.chars()
            .all(|c| c.is_alphanumeric() || "/._-+,:@".contains(c))
        {
            p.to_string()
        } else {
            format!("'{}'", p.replace('\'', "'\\''"))
        }
    };
    let command = quote(command);
    let mut steps: Vec<(String, &str)> = Vec::new();
    match own {
        None => {
            steps.push((
                format!("{command} demo path/to/your/workspace"),
                "asks these questions of your code",
            ));
            steps.push(("cd path/to/your/workspace".into(), ""));
        }
        Some(ws) => steps.push((format!("cd {}", quote(&ws.display().to_string())), "")),
    }
    steps.push((
        format!("{command} init --write-ide-config"),
        "registers the server with Claude Code, Cursor and VS Code",
    ));
    steps.push((
        format!("{command} doctor"),
        "checks the config, roots, index, daemon and audit trail",
    ));
    steps.push((
        format!("{command} query <tool> --help"),
        "prints one tool's description and arguments",
    ));
    steps.push((
        format!("{command} query smart_search '{{\"query\": \"X\"}}'"),
        "asks one tool a question, without an agent",
    ));
    // Each command alone on its line, so it can be copied as it is; what it does below it.
    let mut t = String::from("\nNext steps for your own workspace:\n");
    for (n, (cmd, why)) in steps.iter().enumerate() {
        t.push_str(&format!("  {}. {cmd}\n", n + 1));
        if !why.is_empty() {
            t.push_str(&format!("     {why}\n"));
        }
    }
    t.push_str(&format!(
        "Then restart your agent: its {tools} mesh-mcp tools answer with path:line evidence."
    ));
    t
}

fn run(workspace: &std::path::Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let script = script_for(workspace)?;
    let scratch = std::env::temp_dir().join(format!("mesh-demo-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let mut child = Command::new(exe)
        .args(["run", "--standalone"])
        .current_dir(workspace)
        .env("MESH_AUDIT_DB", scratch.join("audit.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    // The transcript is the demo's output: stdout, bold requests only on a terminal without
    // NO_COLOR. Logs (the server's included) stay on stderr.
    let bold = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut out = std::io::stdout().lock();
    let mut say = |text: &str| -> Result<(), String> {
        writeln!(out, "{text}").map_err(|e| {
            // A reader who stopped reading (`mesh-mcp demo | head`) needs no message.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                String::new()
            } else {
                format!("cannot write the transcript: {e}")
            }
        })
    };
    let mut next_id = 0i64;
    let mut call = |method: &str, params: Value| -> Result<(String, Value), String> {
        next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params});
        let shown = if bold {
            format!("\n\x1b[1m→ {req}\x1b[0m")
        } else {
            format!("\n→ {req}")
        };
        writeln!(stdin, "{req}").map_err(|e| format!("server stdin closed: {e}"))?;
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("the server exited before answering".into());
            }
            let msg: Value = serde_json::from_str(&line).map_err(|e| format!("bad frame: {e}"))?;
            if msg.get("id") == Some(&json!(next_id)) {
                return Ok((shown, msg));
            }
        }
    };
    let ws = canonical(workspace);
    say(&format!("mesh-mcp demo on {}", ws.display()))?;
    let (shown, init) = call(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "mesh-mcp demo", "version": crate::VERSION}}),
    )?;
    say(&shown)?;
    let info = &init["result"]["serverInfo"];
    say(&format!(
        "← {} {} (protocol {})",
        info["name"].as_str().unwrap_or("?"),
        info["version"].as_str().unwrap_or("?"),
        init["result"]["protocolVersion"].as_str().unwrap_or("?")
    ))?;
    let (shown, list) = call("tools/list", json!({}))?;
    say(&shown)?;
    let tools: Vec<String> = list["result"]["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    say(&format!("← tools: {}", tools.join(", ")))?;
    for (tool, args) in script {
        if !tools.iter().any(|t| t == tool) {
            continue;
        }
        let (shown, resp) = call("tools/call", json!({"name": tool, "arguments": args}))?;
        say(&shown)?;
        let text = resp["result"]["content"][0]["text"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| resp.to_string());
        say(&text)?;
    }
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&scratch);
    let own = !is_example(workspace);
    say(&next_steps(
        &super::init::server_command().0,
        own.then_some(&ws),
        tools.len(),
    ))?;
    Ok(())
}
