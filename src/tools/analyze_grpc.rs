//! `analyze_grpc`: one RPC or service end to end — its `.proto` definition, the server handlers
//! and the client call sites in every language, with confidence — plus a wire-format
//! breaking-change check of the defining `.proto` against a git base.
//!
//! Target matching: when anything matches by name (exact, case-folded,
//! `SIGN_UP` ↔ `SignUp`, `Service.Method`, `pkg.Service/Method`, a package), only those are
//! traced and the RPCs that merely contain the target are listed as not traced; only when
//! nothing matches by name are substring matches traced, labelled heuristic. Code that builds
//! a client of the service but has no resolved call of any of its RPCs is listed as "may call"
//! (a file whose calls were resolved method by method is not). Test files are left out unless
//! `include_tests`, and counted; generated code never appears (the graph skips it).
//!
//! The wire check runs git through [`crate::git`] (no shell, timeout, scrubbed environment) and
//! diffs with [`super::wire_check`]. With an explicit `base`, a problem is a
//! tool error (`isError`, docs/ARCHITECTURE.md §2.5), except a `.proto` outside any git
//! repository, which skips the check with a note; without one, a one-line "Skipped" note and
//! the trace is kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::wire_check::{self, Finding, WireReport};
use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::git::{Git, GitError, validate_revision};
use crate::index::facts::{GrpcFact, Language};
use crate::index::graph::{Confidence, Graph, RpcLink, ServiceLink, method_key};
use crate::index::snapshot::Snapshot;
use crate::render::{MAX_OUTPUT_BYTES, inline_code};

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "analyze_grpc",
    title: "Trace a gRPC service or RPC",
    description: "Traces one gRPC RPC or service end to end: its .proto definition (path:line, \
full name, signature, copies), the server handlers and the client call sites in every language \
with confidence, code that only builds a client for the service, and a wire-format \
breaking-change check of the defining .proto against a git base (reused field numbers, wire \
type changes, cardinality, deletions without `reserved`). Use \
it for 'who serves / who calls this RPC' and 'is this .proto change safe'; for Kafka and other \
events use analyze_impact. Example: {\"target\": \"OrderService.CreateOrder\", \"base\": \
\"origin/main\"}.",
    input_schema: || {
        object_schema(
            json!({
                "target": {"type": "string", "description": "A service (\"OrderService\"), a method (\"CreateOrder\"), \"OrderService.CreateOrder\", \"acme.orders.v1.OrderService/CreateOrder\", a package, or a .proto path inside the workspace (\"proto/orders.proto\")."},
                "base": {"type": "string", "description": "Git revision to compare the .proto with: a branch, tag or commit, e.g. \"origin/main\". Omitted: the merge-base of HEAD with origin/HEAD, main or master, else HEAD."},
                "include_tests": {"type": "boolean", "description": "Also list handlers and call sites in test files (default false), e.g. true."}
            }),
            &["target"],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: false,
        extra: super::structured::TESTS_LEFT_OUT,
        row: "{}",
    }),
    run,
    truncation_hint: |args| {
        format!(
            "Trace one RPC at a time: analyze_grpc(target: \"<Service>.<Method>\") instead of \"{}\".",
            super::text_arg(args, "target")
        )
    },
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    target: String,
    base: Option<String>,
    include_tests: Option<bool>,
}

/// Bytes kept free for the notes the dispatcher prepends (skill hint, git-operation note).
const RESERVE_BYTES: usize = 1536;
/// At most this many defining `.proto` files are wire-checked in one answer.
const MAX_WIRE_FILES: usize = 3;
/// Findings shown per wire-check section (breaking, warnings) when one file is checked; with
/// several files each shows a third, so the answer stays within the cap.
const MAX_BREAKING_SHOWN: usize = 40;
const MAX_WARNINGS_SHOWN: usize = 15;
/// Names listed in the "not traced" line.
const MAX_NOT_TRACED_SHOWN: usize = 10;
/// RPCs traced at most (substring fallbacks can match many).
const MAX_TRACED_RPCS: usize = 60;

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    let (args, snap): (Args, _) = match super::decode_indexed("analyze_grpc", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if let Err(e) = super::smart_search::check_text_lens(
        "analyze_grpc",
        &[
            ("target", Some(args.target.as_str())),
            ("base", args.base.as_deref()),
        ],
    ) {
        return e;
    }
    let target = args.target.trim();
    if target.is_empty() {
        return ToolOutput::error(
            "Invalid arguments for analyze_grpc: `target` is empty. Pass a service, an RPC or a \
             .proto path, e.g. {\"target\": \"OrderService.CreateOrder\"}."
                .into(),
        );
    }
    // A file path that is not a `.proto` is no RPC or service name: matching it as one would
    // answer "0 services" about a question that was never about gRPC names. (A `\` is no
    // path sign: PHP qualifies names with it.)
    if !target.to_ascii_lowercase().ends_with(".proto")
        && (super::find_dependents::looks_like_fs_path(target) || target.matches('/').count() > 1)
    {
        return ToolOutput::error(format!(
            "Invalid target for analyze_grpc: {} is a file path, not an RPC or service name. Pass `Service`, `Method`, `Service.Method` or `pkg.Service/Method` (e.g. {{\"target\": \"OrderService.CreateOrder\"}}), or the path of a `.proto` file inside the workspace, relative to its root (e.g. {{\"target\": \"protos/orders.proto\"}}).",
            inline_code(&crate::protocol::echo_input(
                &target.escape_debug().to_string()
            ))
        ));
    }
    let base = args.base.as_deref();
    if let Some(b) = base
        && let Err(why) = validate_revision(b)
    {
        return ToolOutput::error(format!(
            "Invalid base {}: {why}. Pass a branch, tag or commit, e.g. {{\"base\": \"origin/main\"}}, or omit `base` to compare with the merge-base of origin/main.",
            inline_code(&crate::protocol::echo_input(&b.escape_debug().to_string()))
        ));
    }
    let include_tests = args.include_tests.unwrap_or(false);

    // What to trace, and which .proto files to check.
    let mut wire_files: Vec<(PathBuf, String)> = Vec::new();
    let selection = if target.to_ascii_lowercase().ends_with(".proto") {
        let resolved = match env.shared.jail.resolve(target) {
            Ok(r) => r,
            Err(e) => return ToolOutput::error(proto_path_error(snap, &e.to_string())),
        };
        let file = proto_file_index(snap, &resolved.path);
        let display = match file {
            Some(fi) => snap.display_path(&snap.files[fi as usize]),
            None => resolved
                .path
                .strip_prefix(env.shared.jail.base())
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| target.to_string()),
        };
        wire_files.push((resolved.path.clone(), display.clone()));
        select_in_file(&snap.graph, file, display)
    } else {
        let sel = select(&snap.graph, target);
        let mut seen = BTreeSet::new();
        for &c in &sel.contracts {
            let def = snap.graph.contracts[c as usize].def;
            if seen.insert(def.file) && wire_files.len() < MAX_WIRE_FILES {
                let f = &snap.files[def.file as usize];
                wire_files.push((snap.abs_path(f), snap.display_path(f)));
            }
        }
        sel
    };

    let mut wire = String::new();
    let mut wire_rows = Vec::new();
    if wire_files.is_empty() {
        if base.is_some() {
            wire.push_str(&format!(
                "\n### Wire-format check\n_Skipped: no `.proto` definition is indexed for {}, so there is no file to compare with the base._\n",
                inline_code(target)
            ));
        }
    } else {
        let share = wire_files.len();
        for (abs, display) in &wire_files {
            match wire_section(abs, display, base, share, &mut wire_rows) {
                Ok(s) => wire.push_str(&s),
                Err(e) => return e,
            }
        }
        let distinct_defs: BTreeSet<u32> = crate::order::set_of(
            selection
                .contracts
                .iter()
                .map(|&c| snap.graph.contracts[c as usize].def.file),
        );
        if distinct_defs.len() > wire_files.len() {
            wire.push_str(&format!(
                "\n_Wire check limited to {} of {} defining files; pass one `.proto` path as `target` to check another._\n",
                wire_files.len(),
                distinct_defs.len()
            ));
        }
    }

    let traces = trace(snap, &selection, include_tests);
    let budget = MAX_OUTPUT_BYTES
        .saturating_sub(RESERVE_BYTES)
        .saturating_sub(wire.len());
    let (mut text, mut files) = render_trace(snap, target, &selection, &traces, budget);
    if text.ends_with("\n\n") && wire.starts_with('\n') {
        text.pop();
    }
    text.push_str(&wire);
    files.extend(wire_files.into_iter().map(|(_, d)| d));
    crate::order::sort(&mut files);
    files.dedup();
    let mut rows = trace_rows(snap, &traces);
    rows.append(&mut wire_rows);
    let data = super::structured::with(
        super::structured::page(rows.len(), 0, None, rows),
        json!({"testsLeftOut": traces.tests_left_out}),
    );
    let mut out = ToolOutput::ok(text).with_data(data);
    out.files_accessed = files;
    out
}

/// The trace as structured rows, from the same [`Trace`] the text renders: per service its
/// definition and server registrations and clients, per RPC its definition, handlers and
/// call sites (at most as many per list as the text shows).
fn trace_rows(snap: &Snapshot, trace: &Trace) -> Vec<Value> {
    let g = &snap.graph;
    let traced_rpcs: usize = trace.contracts.iter().map(|c| c.rpcs.len()).sum();
    let cap = (60 / traced_rpcs.max(1)).clamp(5, 30);
    let mut rows = Vec::new();
    let site = |s: &Site, role: &str, name: &str| {
        super::structured::row(&s.path, s.line, role, name, s.confidence.label(), &s.label)
    };
    for ct in &trace.contracts {
        let c = &g.contracts[ct.contract as usize];
        let path = snap.display_path(&snap.files[c.def.file as usize]);
        rows.push(super::structured::row(
            &path, c.def.line, "service", &c.fqn, "exact", "",
        ));
        rows.extend(
            ct.servers
                .iter()
                .take(cap)
                .map(|s| site(s, "server", &c.name)),
        );
        rows.extend(
            ct.clients
                .iter()
                .take(cap)
                .map(|cl| site(&cl.site, "client", &c.name)),
        );
        for rt in &ct.rpcs {
            let rpc = &g.rpcs[rt.rpc as usize];
            let full = format!("{}.{}", c.name, rpc.name);
            let path = snap.display_path(&snap.files[rpc.def.file as usize]);
            let sig = signature(g, rt.rpc);
            rows.push(super::structured::row(
                &path,
                rpc.def.line,
                "rpc",
                &full,
                "exact",
                &sig,
            ));
            rows.extend(
                rt.handlers
                    .iter()
                    .take(cap)
                    .map(|s| site(s, "handler", &full)),
            );
            rows.extend(rt.calls.iter().take(cap).map(|s| site(s, "call", &full)));
        }
    }
    rows
}

/// The error for a `.proto` target the workspace jail refused: what was wrong with the path
/// (without the jail's advice about `scope`, an argument this tool does not have) and the
/// `.proto` files the index holds, to pass one of them instead.
fn proto_path_error(snap: &Snapshot, why: &str) -> String {
    let why = why.split_once("; allowed scopes").map_or(why, |(w, _)| w);
    let mut protos: Vec<String> = snap
        .files
        .iter()
        .filter(|f| f.lang == crate::index::facts::Language::Protobuf)
        .map(|f| snap.display_path(f).to_string())
        .collect();
    protos.sort();
    if protos.is_empty() {
        return format!(
            "Invalid target for analyze_grpc: {why}; the index holds no .proto file. Pass a service or method name instead (`OrderService`, `OrderService.CreateOrder`)."
        );
    }
    let shown: Vec<String> = protos.iter().take(8).map(|p| inline_code(p)).collect();
    format!(
        "Invalid target for analyze_grpc: {why}; the .proto files the index holds ({} in all): {}. Pass one of them, or a service or method name (`OrderService`, `OrderService.CreateOrder`).",
        protos.len(),
        shown.join(", ")
    )
}

/// The snapshot index of the `.proto` file at `path`, if indexed.
fn proto_file_index(snap: &Snapshot, path: &Path) -> Option<u32> {
    snap.files.iter().enumerate().find_map(|(i, f)| {
        (f.lang == Language::Protobuf && {
            let abs = snap.abs_path(f);
            abs == path || std::fs::canonicalize(&abs).is_ok_and(|c| c == path)
        })
        .then_some(i as u32)
    })
}

// ---------------------------------------------------------------------------------------------
// Selection
// ---------------------------------------------------------------------------------------------

/// What a target selects.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Contracts involved (matched services and owners of matched RPCs), in graph order.
    pub contracts: Vec<u32>,
    /// RPCs traced, in graph order.
    pub rpcs: Vec<u32>,
    /// True when nothing matched by name and these are substring matches.
    pub heuristic: bool,
    /// Names of RPCs and services that only contain the target (not traced).
    pub not_traced: Vec<String>,
    /// RPCs that matched but were over [`MAX_TRACED_RPCS`].
    pub over_limit: usize,
    /// The first few of those, as `Service.Method`.
    pub over_limit_names: Vec<String>,
    /// How the selection was made (for the header).
    pub how: String,
    /// The `.proto` path, when the target was one.
    pub file: Option<String>,
}

/// Selects what `target` names in the graph (see the module doc for the rules).
pub fn select(g: &Graph, target: &str) -> Selection {
    let key = method_key(target);
    let mut services: BTreeSet<u32> = BTreeSet::new();
    let mut rpcs: BTreeSet<u32> = BTreeSet::new();
    let (svc_part, method_part) = match target.rsplit_once('/') {
        Some((s, m)) => (Some(s), Some(m)),
        None => match target.rsplit_once('.') {
            Some((s, m)) => (Some(s), Some(m)),
            None => (None, None),
        },
    };
    let service_is = |c: u32, s: &str| {
        let ct = &g.contracts[c as usize];
        method_key(&ct.name) == method_key(s) || ct.fqn.eq_ignore_ascii_case(s)
    };
    for c in 0..g.contracts.len() as u32 {
        let ct = &g.contracts[c as usize];
        if !target.contains('/')
            && (method_key(&ct.name) == key
                || ct.fqn.eq_ignore_ascii_case(target)
                || (!ct.package.is_empty() && ct.package.eq_ignore_ascii_case(target)))
        {
            services.insert(c);
        }
        for &r in &ct.rpcs {
            let name = &g.rpcs[r as usize].name;
            let by_bare_name = !target.contains(['/', '.']) && method_key(name) == key;
            let by_qualified = match (svc_part, method_part) {
                (Some(s), Some(m)) => method_key(name) == method_key(m) && service_is(c, s),
                _ => false,
            };
            if by_bare_name || by_qualified {
                rpcs.insert(r);
            }
        }
    }
    let exact = !services.is_empty() || !rpcs.is_empty();
    let mut sel = Selection::default();
    // Substrings are looked for with the last segment (`CreateOrder` of `Orders.CreateOrder`).
    let needle = method_key(method_part.unwrap_or(target));
    let contains = |hay: &str| needle.len() >= 3 && method_key(hay).contains(&needle);
    let mut traced: BTreeSet<u32> = rpcs.clone();
    for &c in &services {
        traced.extend(g.contracts[c as usize].rpcs.iter().copied());
    }
    let mut loose_services = Vec::new();
    let mut loose_rpcs = Vec::new();
    for c in 0..g.contracts.len() as u32 {
        let ct = &g.contracts[c as usize];
        if !services.contains(&c) && contains(&ct.fqn) {
            loose_services.push(c);
        }
        for &r in &ct.rpcs {
            let full = format!("{}.{}", ct.name, g.rpcs[r as usize].name);
            if !traced.contains(&r)
                && (contains(&full) || contains(&format!("{}/{}", ct.fqn, g.rpcs[r as usize].name)))
            {
                loose_rpcs.push(r);
            }
        }
    }
    if exact {
        let mut parts = Vec::new();
        if !services.is_empty() {
            parts.push(crate::render::plural(services.len(), "service"));
        }
        if !rpcs.is_empty() {
            parts.push(crate::render::plural(rpcs.len(), "RPC"));
        }
        sel.how = format!("matched by name: {}", parts.join(" and "));
        for c in &loose_services {
            let ct = &g.contracts[*c as usize];
            sel.not_traced.push(ct.fqn.clone());
        }
        for r in &loose_rpcs {
            let rpc = &g.rpcs[*r as usize];
            if services.contains(&rpc.contract) {
                continue;
            }
            sel.not_traced.push(format!(
                "{}.{}",
                g.contracts[rpc.contract as usize].name, rpc.name
            ));
        }
    } else {
        sel.heuristic = true;
        for &c in &loose_services {
            traced.extend(g.contracts[c as usize].rpcs.iter().copied());
        }
        traced.extend(loose_rpcs.iter().copied());
        sel.how = "nothing is named exactly like the target; tracing the services and RPCs whose names contain it (heuristic)".to_string();
        services.extend(loose_services.iter().copied());
    }
    let mut all: Vec<u32> = traced.into_iter().collect();
    limit_rpcs(g, &mut all, &mut sel);
    let mut contracts: BTreeSet<u32> = services;
    contracts.extend(all.iter().map(|&r| g.rpcs[r as usize].contract));
    sel.contracts = contracts.into_iter().collect();
    sel.rpcs = all;
    sel
}

/// Everything defined (or copied) in one `.proto` file.
fn select_in_file(g: &Graph, file: Option<u32>, display: String) -> Selection {
    let mut sel = Selection {
        how: format!("every service of {}", inline_code(&display)),
        file: Some(display),
        ..Selection::default()
    };
    let Some(file) = file else {
        return sel;
    };
    for c in 0..g.contracts.len() as u32 {
        let ct = &g.contracts[c as usize];
        if ct.copies.iter().any(|l| l.file == file) {
            sel.contracts.push(c);
            sel.rpcs.extend(ct.rpcs.iter().copied());
        }
    }
    let mut rpcs = std::mem::take(&mut sel.rpcs);
    limit_rpcs(g, &mut rpcs, &mut sel);
    sel.rpcs = rpcs;
    sel
}

/// Keeps the first [`MAX_TRACED_RPCS`] RPCs, recording how many (and which) were dropped.
fn limit_rpcs(g: &Graph, rpcs: &mut Vec<u32>, sel: &mut Selection) {
    if rpcs.len() <= MAX_TRACED_RPCS {
        return;
    }
    sel.over_limit = rpcs.len() - MAX_TRACED_RPCS;
    sel.over_limit_names = rpcs[MAX_TRACED_RPCS..]
        .iter()
        .take(5)
        .map(|&r| {
            let rpc = &g.rpcs[r as usize];
            format!("{}.{}", g.contracts[rpc.contract as usize].name, rpc.name)
        })
        .collect();
    rpcs.truncate(MAX_TRACED_RPCS);
}

// ---------------------------------------------------------------------------------------------
// Trace
// ---------------------------------------------------------------------------------------------

/// One place in code: a handler, a call, a server registration or a client construction.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub path: String,
    pub line: u32,
    pub lang: &'static str,
    pub label: String,
    pub confidence: Confidence,
}

/// The trace of one RPC.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcTrace {
    pub rpc: u32,
    pub handlers: Vec<Site>,
    pub calls: Vec<Site>,
}

/// The trace of one service contract.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractTrace {
    pub contract: u32,
    /// Server registrations (`RegisterOrdersServer`, `extends OrdersImplBase`, …).
    pub servers: Vec<Site>,
    /// Client constructions in files with no resolved call of any RPC of the service: the
    /// sites that may call any of its RPCs.
    pub may_call: Vec<Site>,
    /// Every client construction or registration, each with the RPCs its file calls (resolved)
    /// or, failing that, its root calls elsewhere; those with neither come first.
    pub clients: Vec<ClientSite>,
    pub rpcs: Vec<RpcTrace>,
}

/// A client of a service and what the index resolved around it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientSite {
    pub site: Site,
    /// RPCs called from the client's own file, or through the field holding it from another
    /// file of its package.
    pub in_file: Vec<String>,
    /// RPCs called from other files of the client's root (dependency injection).
    pub in_root: Vec<String>,
}

/// For each client of contract `c`: the RPC names its file calls (or its package calls through
/// the field holding it) and those its root calls elsewhere (sorted, unique). A client whose file calls none may call any RPC of the service
/// (its root's calls are shown, not assumed to be its own).
pub fn client_resolution(snap: &Snapshot, c: u32) -> Vec<(u32, Vec<String>, Vec<String>)> {
    let g = &snap.graph;
    let ct = &g.contracts[c as usize];
    let all: BTreeSet<u32> = crate::order::set_of(ct.rpcs.iter().copied());
    let mut by_file: std::collections::BTreeMap<u32, BTreeSet<&str>> = Default::default();
    let mut by_root: std::collections::BTreeMap<u16, BTreeSet<(u32, &str)>> = Default::default();
    for l in g.calls.iter().filter(|l| all.contains(&l.rpc)) {
        let name = g.rpcs[l.rpc as usize].name.as_str();
        by_file.entry(l.at.file).or_default().insert(name);
        by_root
            .entry(snap.files[l.at.file as usize].root)
            .or_default()
            .insert((l.at.file, name));
    }
    g.clients
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contract == c)
        .map(|(i, l)| {
            let mut in_file: BTreeSet<&str> = by_file.get(&l.at.file).cloned().unwrap_or_default();
            // A client stored in a field is called through it from the package's other files
            // (Go: `svc.ads = pb.NewAdServiceClient(conn)` here, `fe.ads.GetAds(…)` there).
            let dir = |f: u32| {
                let file = &snap.files[f as usize];
                (file.root, file.path.rsplit_once('/').map_or("", |(d, _)| d))
            };
            let through = format!("{}.", l.label);
            for call in g.calls.iter().filter(|k| all.contains(&k.rpc)) {
                if call.at.file != l.at.file
                    && call.label.starts_with(&through)
                    && dir(call.at.file) == dir(l.at.file)
                {
                    in_file.insert(g.rpcs[call.rpc as usize].name.as_str());
                }
            }
            let in_file: Vec<String> = in_file.iter().map(|n| n.to_string()).collect();
            let root = snap.files[l.at.file as usize].root;
            let mut in_root: Vec<String> = by_root
                .get(&root)
                .map(|s| {
                    s.iter()
                        .filter(|(f, _)| *f != l.at.file)
                        .map(|(_, n)| n.to_string())
                        .collect()
                })
                .unwrap_or_default();
            in_root.dedup();
            (i as u32, in_file, in_root)
        })
        .collect()
}

/// The whole trace, and what the test filter left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub contracts: Vec<ContractTrace>,
    pub tests_left_out: usize,
}

/// Collects handlers, calls, servers and service-level clients for the selection.
pub fn trace(snap: &Snapshot, sel: &Selection, include_tests: bool) -> Trace {
    let g = &snap.graph;
    let mut left_out = 0;
    let mut keep = |file: u32| -> bool {
        let test = snap.files[file as usize].is_test;
        if test && !include_tests {
            left_out += 1;
            return false;
        }
        true
    };
    let site_rpc = |l: &RpcLink| site(snap, l.at.file, l.at.line, &l.label, l.confidence);
    let site_svc = |l: &ServiceLink| site(snap, l.at.file, l.at.line, &l.label, l.confidence);
    let mut out = Vec::new();
    for &c in &sel.contracts {
        let ct = &g.contracts[c as usize];
        let all_rpcs: BTreeSet<u32> = crate::order::set_of(ct.rpcs.iter().copied());
        let calling_files: BTreeSet<u32> = crate::order::set_of(
            g.calls
                .iter()
                .filter(|l| all_rpcs.contains(&l.rpc))
                .map(|l| l.at.file),
        );
        let servers = g
            .servers
            .iter()
            .filter(|l| l.contract == c && keep(l.at.file))
            .map(site_svc)
            .collect::<Vec<_>>();
        let _ = &calling_files;
        let mut clients: Vec<ClientSite> = client_resolution(snap, c)
            .into_iter()
            .filter(|(i, _, _)| keep(g.clients[*i as usize].at.file))
            .map(|(i, in_file, in_root)| ClientSite {
                site: site_svc(&g.clients[i as usize]),
                in_file,
                in_root,
            })
            .collect();
        // The unresolved first (an agent must read them: no call in the file nor its root),
        // then those whose root resolves calls elsewhere, then those resolved in their file.
        crate::order::sort_by_key(&mut clients, |cl| {
            (
                !cl.in_file.is_empty(),
                !cl.in_root.is_empty(),
                cl.site.path.clone(),
                cl.site.line,
            )
        });
        let may_call: Vec<Site> = clients
            .iter()
            .filter(|cl| cl.in_file.is_empty())
            .map(|cl| cl.site.clone())
            .collect();
        let mut rpcs = Vec::new();
        for &r in sel.rpcs.iter().filter(|r| all_rpcs.contains(r)) {
            // The kept sites of `links` (handlers or calls) that are of this RPC, sorted.
            let mut sites_of_rpc = |links: &[RpcLink]| {
                sorted(
                    links
                        .iter()
                        .filter(|l| l.rpc == r && keep(l.at.file))
                        .map(site_rpc)
                        .collect(),
                )
            };
            rpcs.push(RpcTrace {
                rpc: r,
                handlers: sites_of_rpc(&g.handlers),
                calls: sites_of_rpc(&g.calls),
            });
        }
        out.push(ContractTrace {
            contract: c,
            servers: sorted(servers),
            may_call: sorted(may_call),
            clients,
            rpcs,
        });
    }
    Trace {
        contracts: out,
        tests_left_out: left_out,
    }
}

fn site(snap: &Snapshot, file: u32, line: u32, label: &str, confidence: Confidence) -> Site {
    let f = &snap.files[file as usize];
    Site {
        path: snap.display_path(f),
        line,
        lang: f.lang.name(),
        label: label.to_string(),
        confidence,
    }
}

/// Sites ordered by language, then confidence, then path and line, without duplicates.
fn sorted(mut sites: Vec<Site>) -> Vec<Site> {
    crate::order::sort_by(&mut sites, |a, b| {
        (a.lang, a.confidence, &a.path, a.line, &a.label).cmp(&(
            b.lang,
            b.confidence,
            &b.path,
            b.line,
            &b.label,
        ))
    });
    sites.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.label == b.label);
    sites
}

// ---------------------------------------------------------------------------------------------
// Rendering of the trace
// ---------------------------------------------------------------------------------------------

fn signature(g: &Graph, r: u32) -> String {
    let rpc = &g.rpcs[r as usize];
    format!(
        "rpc {}({}{}) returns ({}{})",
        rpc.name,
        if rpc.client_streaming { "stream " } else { "" },
        rpc.request,
        if rpc.server_streaming { "stream " } else { "" },
        rpc.response
    )
}

fn site_line(s: &Site, extra: &str) -> String {
    format!(
        "  - {}: {} at {} _({}{})_\n",
        s.lang,
        inline_code(&s.label),
        crate::render::code_loc(&s.path, s.line),
        extra,
        s.confidence.label()
    )
}

/// A bulleted list of sites, at most `cap` shown.
fn site_list(out: &mut String, sites: &[Site], cap: usize, extra: &str, more_hint: &str) {
    for s in sites.iter().take(cap) {
        out.push_str(&site_line(s, extra));
    }
    if sites.len() > cap {
        out.push_str(&format!("  - …and {} more{more_hint}\n", sites.len() - cap));
    }
}

/// Renders the trace within `budget` bytes; returns the text and the paths it cites.
pub fn render_trace(
    snap: &Snapshot,
    target: &str,
    sel: &Selection,
    trace: &Trace,
    budget: usize,
) -> (String, Vec<String>) {
    let g = &snap.graph;
    let mut files = Vec::new();
    let mut out = format!("## gRPC trace: {}\n\n", inline_code(target));
    let searched = format!(
        "{} indexed files in {} root(s), index generation {}",
        snap.files.len(),
        snap.roots.len(),
        snap.generation
    );
    if sel.contracts.is_empty() {
        no_contract(snap, target, sel, &searched, &mut out, &mut files);
        return (out, files);
    }
    selection_notes(target, sel, &searched, &mut out);
    out.push('\n');
    let traced_rpcs: usize = trace.contracts.iter().map(|c| c.rpcs.len()).sum();
    // Fewer rows per list when many RPCs share the answer.
    let cap = (60 / traced_rpcs.max(1)).clamp(5, 30);
    let footer_reserve = 600;
    let mut cut_rpcs: Vec<String> = Vec::new();
    for ct_trace in &trace.contracts {
        let ct = &g.contracts[ct_trace.contract as usize];
        let def_path = snap.display_path(&snap.files[ct.def.file as usize]);
        let block = service_block(snap, ct_trace, &def_path, cap, &searched);
        if out.len() + block.len() + footer_reserve > budget {
            cut_rpcs.extend(
                ct_trace
                    .rpcs
                    .iter()
                    .map(|r| format!("{}.{}", ct.name, g.rpcs[r.rpc as usize].name)),
            );
            continue;
        }
        out.push_str(&block);
        files.push(def_path);
        files.extend(ct_trace.servers.iter().take(cap).map(|s| s.path.clone()));
        for rt in &ct_trace.rpcs {
            let (full, def_path, block) = rpc_block(snap, ct_trace, rt, cap, &searched);
            if out.len() + block.len() + footer_reserve > budget {
                cut_rpcs.push(full);
                continue;
            }
            out.push_str(&block);
            files.push(def_path);
            for s in rt.handlers.iter().chain(&rt.calls).take(2 * cap) {
                files.push(s.path.clone());
            }
        }
    }
    cut_note(sel, cut_rpcs, &mut out);
    if trace.tests_left_out > 0 {
        out.push_str(&format!(
            "_{} in test files left out (pass `include_tests: true` to list them)._\n",
            if trace.tests_left_out == 1 {
                "1 match".to_string()
            } else {
                format!("{} matches", trace.tests_left_out)
            }
        ));
    }
    (out, files)
}

/// The whole answer when the selection holds no contract: a file that declares no service, or
/// a target no `.proto` names (then the code sites that mention it, unresolved).
fn no_contract(
    snap: &Snapshot,
    target: &str,
    sel: &Selection,
    searched: &str,
    out: &mut String,
    files: &mut Vec<String>,
) {
    let g = &snap.graph;
    if let Some(path) = &sel.file {
        out.push_str(&format!(
            "_{} declares no gRPC service in the index ({searched}); only the wire-format check applies._\n",
            inline_code(path)
        ));
        return;
    }
    let protos = snap
        .files
        .iter()
        .filter(|f| f.lang == Language::Protobuf)
        .count();
    out.push_str(&format!(
        "_No `.proto` service or RPC named {} (or containing it) is indexed: searched {} services and {} RPCs from {protos} `.proto` file(s) among {searched}._\n",
        inline_code(target),
        g.contracts.len(),
        g.rpcs.len()
    ));
    unresolved_code_sites(snap, target, out, files);
}

/// The notes under the heading: how the target was matched, whether the match is heuristic,
/// and the names that contain the target but were not traced.
fn selection_notes(target: &str, sel: &Selection, searched: &str, out: &mut String) {
    out.push_str(&format!(
        "_Traced: {}; searched {searched}. Generated code is never a handler or caller._\n",
        sel.how
    ));
    if sel.heuristic {
        out.push_str("_These matches are heuristic: check each before relying on it._\n");
    }
    if !sel.not_traced.is_empty() {
        let shown: Vec<String> = sel
            .not_traced
            .iter()
            .take(MAX_NOT_TRACED_SHOWN)
            .map(|n| inline_code(n))
            .collect();
        let more = sel.not_traced.len().saturating_sub(MAX_NOT_TRACED_SHOWN);
        out.push_str(&format!(
            "_Not traced: {} other name(s) only contain {}: {}{}. Pass one's exact name to trace it._\n",
            sel.not_traced.len(),
            inline_code(target),
            shown.join(", "),
            if more > 0 { format!(" (+{more} more)") } else { String::new() }
        ));
    }
}

/// One service's block: its definition and copies, its server registrations and its clients
/// (at most `cap` of each).
fn service_block(
    snap: &Snapshot,
    ct_trace: &ContractTrace,
    def_path: &str,
    cap: usize,
    searched: &str,
) -> String {
    let ct = &snap.graph.contracts[ct_trace.contract as usize];
    let mut block = format!(
        "### Service {} — {}\n",
        inline_code(&ct.fqn),
        crate::render::code_loc(def_path, ct.def.line)
    );
    let copies: Vec<String> = ct
        .copies
        .iter()
        .filter(|l| **l != ct.def)
        .map(|l| crate::render::code_loc(&snap.display_path(&snap.files[l.file as usize]), l.line))
        .collect();
    if !copies.is_empty() {
        let shown: Vec<&String> = copies.iter().take(8).collect();
        block.push_str(&format!(
            "- **Copies of the contract ({})**: {}{}\n",
            copies.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if copies.len() > 8 {
                format!(", +{} more", copies.len() - 8)
            } else {
                String::new()
            }
        ));
    }
    if ct_trace.servers.is_empty() {
        block.push_str(&format!(
            "- **Server registrations: 0** — no code registers or implements {} ({searched}).\n",
            inline_code(&ct.name)
        ));
    } else {
        block.push_str(&format!(
            "- **Server registrations ({})**:\n",
            ct_trace.servers.len()
        ));
        site_list(&mut block, &ct_trace.servers, cap, "", "");
    }
    if !ct_trace.clients.is_empty() {
        client_lines(&mut block, ct_trace, &ct.name, cap);
    }
    block.push('\n');
    block
}

/// The service's clients, each with what the index resolved around it (its file's calls, or
/// its root's).
fn client_lines(block: &mut String, ct_trace: &ContractTrace, service: &str, cap: usize) {
    let open = ct_trace.may_call.len();
    block.push_str(&format!(
        "- **Clients ({})**{} — code that builds or registers a client of {}:\n",
        ct_trace.clients.len(),
        if open > 0 {
            format!(", {open} with no resolved call (they may call any of its RPCs; read them)")
        } else {
            String::new()
        },
        inline_code(service)
    ));
    for cl in ct_trace.clients.iter().take(cap) {
        let note = if !cl.in_file.is_empty() {
            format!("calls {} here", cl.in_file.join(", "))
        } else if !cl.in_root.is_empty() {
            format!(
                "no call resolved in this file: may call any of its RPCs (its root calls {} elsewhere)",
                cl.in_root.join(", ")
            )
        } else {
            "no call resolved: may call any of its RPCs".to_string()
        };
        let line = site_line(&cl.site, "service-level client, ");
        block.push_str(&format!("{} — {note}\n", line.trim_end()));
    }
    if ct_trace.clients.len() > cap {
        block.push_str(&format!("  - …and {} more\n", ct_trace.clients.len() - cap));
    }
}

/// One RPC's block: definition, handlers and call sites. Returns the RPC's
/// `Service.Method` name, the path of its definition and the block.
fn rpc_block(
    snap: &Snapshot,
    ct_trace: &ContractTrace,
    rt: &RpcTrace,
    cap: usize,
    searched: &str,
) -> (String, String, String) {
    let g = &snap.graph;
    let ct = &g.contracts[ct_trace.contract as usize];
    let rpc = &g.rpcs[rt.rpc as usize];
    let full = format!("{}.{}", ct.name, rpc.name);
    let def_path = snap.display_path(&snap.files[rpc.def.file as usize]);
    let mut block = format!("#### {}\n", inline_code(&full));
    block.push_str(&format!(
        "- **Definition**: {} — {}\n- **Full name**: {}\n",
        crate::render::code_loc(&def_path, rpc.def.line),
        inline_code(&signature(g, rt.rpc)),
        inline_code(&format!("/{}/{}", ct.fqn, rpc.name))
    ));
    if rt.handlers.is_empty() {
        block.push_str(&format!(
            "- **Server handlers: 0 found** — no handler of {} in {searched}.\n",
            inline_code(&full)
        ));
    } else {
        block.push_str(&format!(
            "- **Server handlers ({})**{}:\n",
            rt.handlers.len(),
            by_language(&rt.handlers)
        ));
        site_list(&mut block, &rt.handlers, cap, "", "");
    }
    call_site_lines(&mut block, g, ct_trace, rt, &full, cap, searched);
    block.push('\n');
    (full, def_path, block)
}

/// The RPC's client call sites; when none resolved, says why (the service's clients call other
/// RPCs, or may call this one, or there is no client at all).
fn call_site_lines(
    block: &mut String,
    g: &Graph,
    ct_trace: &ContractTrace,
    rt: &RpcTrace,
    full: &str,
    cap: usize,
    searched: &str,
) {
    let ct = &g.contracts[ct_trace.contract as usize];
    let rpc = &g.rpcs[rt.rpc as usize];
    let single = ct_trace.rpcs.len() == 1;
    let may_call: &[Site] = if single { &ct_trace.may_call } else { &[] };
    if rt.calls.is_empty() && !single && !ct_trace.may_call.is_empty() {
        block.push_str(&format!(
            "- **Client call sites: 0 resolved** — code building a client of {} ({}) is listed under the service above and may call {}.\n",
            inline_code(&ct.name),
            crate::render::plural(ct_trace.may_call.len(), "site"),
            inline_code(&rpc.name)
        ));
    } else if rt.calls.is_empty() && may_call.is_empty() && !ct_trace.clients.is_empty() {
        block.push_str(&format!(
            "- **Client call sites: 0 resolved** — the {} of {} (listed under the service above) resolve calls of other RPCs only; none of {}.\n",
            crate::render::plural(ct_trace.clients.len(), "client"),
            inline_code(&ct.name),
            inline_code(&rpc.name)
        ));
    } else if rt.calls.is_empty() && may_call.is_empty() {
        block.push_str(&format!(
            "- **Client call sites: 0 found** — no call of {} and no code building a client of {} in {searched}.\n",
            inline_code(full),
            inline_code(&ct.name)
        ));
    } else if rt.calls.is_empty() {
        block.push_str(&format!(
            "- **Client call sites: 0 resolved** — but {} a client of {}; read them, they may call {}:\n",
            if may_call.len() == 1 { "1 site builds".to_string() } else { format!("{} sites build", may_call.len()) },
            inline_code(&ct.name),
            inline_code(&rpc.name)
        ));
        site_list(block, may_call, cap, "service-level client, ", "");
    } else {
        block.push_str(&format!(
            "- **Client call sites ({})**{}:\n",
            rt.calls.len(),
            by_language(&rt.calls)
        ));
        site_list(block, &rt.calls, cap, "", "");
        if !may_call.is_empty() {
            block.push_str(&format!(
                "- **May call ({})** — these build a client of {} but no call was resolved; read them to confirm:\n",
                may_call.len(),
                inline_code(&ct.name)
            ));
            site_list(block, may_call, cap, "service-level client, ", "");
        }
    }
}

/// The note on the RPCs cut to fit the answer, or left over the selection's limit, naming the
/// first few and a call that traces one.
fn cut_note(sel: &Selection, mut cut_rpcs: Vec<String>, out: &mut String) {
    if !cut_rpcs.is_empty() || sel.over_limit > 0 {
        let total = cut_rpcs.len() + sel.over_limit;
        cut_rpcs.extend(sel.over_limit_names.iter().cloned());
        let first = cut_rpcs.first().cloned().unwrap_or_default();
        out.push_str(&format!(
            "_Cut to fit the answer: {} more RPC(s) not shown{}. Trace one at a time, e.g. analyze_grpc(target: \"{}\")._\n\n",
            total,
            if cut_rpcs.is_empty() {
                String::new()
            } else {
                format!(
                    " ({})",
                    cut_rpcs
                        .iter()
                        .take(5)
                        .map(|n| inline_code(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            if first.is_empty() { "<Service>.<Method>" } else { &first }
        ));
    }
}

/// ` — go 2, java 1` when sites come from more than one language.
fn by_language(sites: &[Site]) -> String {
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for s in sites {
        *per.entry(s.lang).or_default() += 1;
    }
    if per.len() < 2 {
        return String::new();
    }
    let parts: Vec<String> = per.iter().map(|(l, n)| format!("{l} {n}")).collect();
    format!(" — {}", parts.join(", "))
}

/// With no contract to resolve against, the code sites that name the target as a service
/// (its `.proto` may live outside the roots).
fn unresolved_code_sites(snap: &Snapshot, target: &str, out: &mut String, files: &mut Vec<String>) {
    let want = crate::index::graph::service_key(target.rsplit(['/', '.']).next().unwrap_or(target));
    let svc_of = |s: &str| crate::index::graph::service_key(s) == want;
    let mut sites = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        if f.generated {
            continue;
        }
        for fact in &f.facts().grpc {
            let (what, line) = match fact {
                GrpcFact::Server { service, line, .. } if svc_of(service) => ("server", *line),
                GrpcFact::Handler {
                    service,
                    method,
                    line,
                } if svc_of(service) => {
                    let _ = method;
                    ("handler", *line)
                }
                GrpcFact::Client { service, line, .. } if svc_of(service) => ("client", *line),
                GrpcFact::Call {
                    service: Some(service),
                    line,
                    ..
                } if svc_of(service) => ("call", *line),
                _ => continue,
            };
            sites.push(site(snap, fi as u32, line, what, Confidence::Heuristic));
        }
    }
    if sites.is_empty() {
        return;
    }
    let sites = sorted(sites);
    out.push_str(&format!(
        "\n**Code that names a service {} without an indexed contract ({})** — its `.proto` may be outside the roots:\n",
        inline_code(target),
        sites.len()
    ));
    site_list(out, &sites, 30, "unresolved, ", "");
    files.extend(sites.iter().take(30).map(|s| s.path.clone()));
}

// ---------------------------------------------------------------------------------------------
// Wire-format check
// ---------------------------------------------------------------------------------------------

/// Which commit the working tree is compared with, and how it was chosen.
pub(crate) struct BaseCommit {
    pub(crate) label: String,
    pub(crate) commit: String,
}

/// The wire-check section for one `.proto` file. With an explicit `base`, a problem is a tool
/// error; without one, a one-line "Skipped" note.
fn wire_section(
    abs: &Path,
    display: &str,
    base: Option<&str>,
    files_checked: usize,
    rows: &mut Vec<Value>,
) -> Result<String, ToolOutput> {
    let path = display;
    let display = &crate::render::inline_code(display);
    let heading = format!("\n### Wire-format check: {display}\n");
    let skip_or_fail = |why: String| -> Result<String, ToolOutput> {
        match base {
            Some(b) => Err(ToolOutput::error(format!(
                "Cannot compare {display} with base {}: {why}.",
                inline_code(b)
            ))),
            None => Ok(format!("{heading}_Skipped: {why}._\n")),
        }
    };
    let current = match std::fs::read(abs) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return skip_or_fail(format!(
                "{display} is not in the working tree any more (deleted since it was indexed)"
            ));
        }
        Err(e) => return skip_or_fail(format!("{display} cannot be read ({e})")),
    };
    let Some(dir) = abs.parent() else {
        return skip_or_fail(format!("{display} has no parent directory"));
    };
    let Some(name) = abs.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return skip_or_fail(format!("{display} has no file name"));
    };
    let git = Git::new(dir);
    let git_problem = |e: GitError| -> String {
        match e {
            GitError::NotARepository => format!("{display} is not inside a git repository"),
            other => other.to_string(),
        }
    };
    let prefix = match git.prefix() {
        Ok(p) => p,
        // Even with an explicit `base`: the trace above still answers; only the check is off.
        Err(GitError::NotARepository) => {
            return Ok(format!(
                "{heading}_Skipped: {display} is not inside a git repository{}._\n",
                base.map_or(String::new(), |b| format!(
                    ", so there is no {} to compare with",
                    inline_code(b)
                ))
            ));
        }
        Err(e) => return skip_or_fail(git_problem(e)),
    };
    let repo_path = format!("{prefix}{name}");
    let chosen = match base {
        Some(b) => match git.commit_of(b) {
            Ok(Some(commit)) => BaseCommit {
                label: inline_code(b),
                commit,
            },
            Ok(None) => {
                return Err(ToolOutput::error(format!(
                    "Unknown base {}: no commit by that name in the repository of {display}. Pass a branch, tag or commit that exists there (see `git branch -a`), e.g. {{\"base\": \"origin/main\"}}, or omit `base`.",
                    inline_code(b)
                )));
            }
            Err(e) => return skip_or_fail(git_problem(e)),
        },
        None => match implicit_base(&git) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Ok(format!(
                    "{heading}_Skipped: the repository of {display} has no commits yet, so there is no base to compare with._\n"
                ));
            }
            Err(e) => return skip_or_fail(git_problem(e)),
        },
    };
    let short = &chosen.commit[..chosen.commit.len().min(10)];
    let mut out = heading.clone();
    out.push_str(&format!(
        "- **Base**: {}, commit `{short}`, compared with the working tree.\n",
        chosen.label
    ));
    let base_bytes = match git.file_at(&chosen.commit, &repo_path) {
        Ok(Some(b)) => b,
        Ok(None) => {
            out.push_str(&format!(
                "- **Result**: new file — {display} does not exist at `{short}`; nothing to compare, no findings.\n"
            ));
            return Ok(out);
        }
        Err(e) => return skip_or_fail(git_problem(e)),
    };
    if base_bytes == current {
        out.push_str("- **Result**: unchanged since the base — no wire-format changes.\n");
        return Ok(out);
    }
    let report = match diff_proto_texts(display, &base_bytes, &current) {
        Ok(r) => r,
        Err(why) => {
            out.push_str(&format!(
                "- **Result**: not compared — {why}. No partial findings are given; fix the file or compare by hand.\n"
            ));
            return Ok(out);
        }
    };
    let share = files_checked.max(1);
    for (f, role) in report
        .breaking
        .iter()
        .map(|f| (f, "breaking"))
        .chain(report.warnings.iter().map(|f| (f, "warning")))
    {
        rows.push(super::structured::row(
            path,
            f.line,
            role,
            &f.element,
            "exact",
            &finding_line(f),
        ));
    }
    out.push_str(&render_report(
        &report,
        (MAX_BREAKING_SHOWN / share).max(5),
        (MAX_WARNINGS_SHOWN / share).max(3),
        display,
    ));
    Ok(out)
}

/// The wire-format diff of two versions of one `.proto` file given as bytes: both guarded
/// like the crawl and syntax-checked, then parsed and compared. The error says which side is
/// unusable and why (no partial findings are ever given).
pub(crate) fn diff_proto_texts(
    display: &str,
    base_bytes: &[u8],
    current: &[u8],
) -> Result<WireReport, String> {
    let texts = [("base", base_bytes), ("working-tree", current)].map(|(which, bytes)| {
        if let Err(reason) = crate::index::crawl::guard(display, bytes) {
            return Err(format!("the {which} version is {reason}"));
        }
        let text = String::from_utf8_lossy(bytes).into_owned();
        if let Some(problem) = wire_check::syntax_problem(&text) {
            return Err(format!("the {which} version has a syntax error: {problem}"));
        }
        Ok(text)
    });
    let [base_text, cur_text] = texts;
    let (base_text, cur_text) = (base_text?, cur_text?);
    let parse = |text: &str| {
        crate::index::lang::protobuf::extract(display, text)
            .proto
            .unwrap_or_default()
    };
    Ok(wire_check::compare(&parse(&base_text), &parse(&cur_text)))
}

/// The implicit base: the merge-base of HEAD with the first of `origin/HEAD`, `origin/main`,
/// `main`, `origin/master`, `master` that exists and shares history, else HEAD; `None` in a
/// repository without commits.
pub(crate) fn implicit_base(git: &Git) -> Result<Option<BaseCommit>, GitError> {
    let Some(head) = git.commit_of("HEAD")? else {
        return Ok(None);
    };
    for reference in [
        "origin/HEAD",
        "origin/main",
        "main",
        "origin/master",
        "master",
    ] {
        if let Some(tip) = git.commit_of(reference)?
            && let Some(mb) = git.merge_base(&head, &tip)?
        {
            return Ok(Some(BaseCommit {
                label: format!("merge-base of `HEAD` and `{reference}`"),
                commit: mb,
            }));
        }
    }
    Ok(Some(BaseCommit {
        label: "`HEAD` (no `origin/HEAD`, `main` or `master`, local or on `origin`, shares history with it)"
            .to_string(),
        commit: head,
    }))
}

fn finding_line(f: &Finding) -> String {
    format!(
        "{}: `{}` #{} (L{}{}): {}",
        f.rule.label(),
        f.element,
        f.number,
        f.line,
        if f.in_base { " in the base" } else { "" },
        f.detail
    )
}

/// The Result and Warnings bullets of a wire report, showing at most `max_breaking` and
/// `max_warnings` findings; a cut names the call that shows more (the file alone).
pub fn render_report(
    report: &WireReport,
    max_breaking: usize,
    max_warnings: usize,
    display: &str,
) -> String {
    let narrower = if max_breaking < MAX_BREAKING_SHOWN {
        format!("; analyze_grpc(target: \"{display}\") shows up to {MAX_BREAKING_SHOWN}")
    } else {
        String::new()
    };
    let mut out = String::new();
    if report.breaking.is_empty() {
        out.push_str("- **Result**: no `WIRE_FORMAT_BREAKING_CHANGE`");
        if report.warnings.is_empty() {
            out.push_str(" — no wire-format changes.\n");
        } else {
            out.push_str(".\n");
        }
    } else {
        out.push_str(&format!(
            "- **Result**: {} × `WIRE_FORMAT_BREAKING_CHANGE`\n",
            report.breaking.len()
        ));
        for (i, f) in report.breaking.iter().take(max_breaking).enumerate() {
            out.push_str(&format!(
                "  {}. `WIRE_FORMAT_BREAKING_CHANGE` {}\n     - Fix: {}\n",
                i + 1,
                finding_line(f),
                f.remediation
            ));
        }
        if report.breaking.len() > max_breaking {
            out.push_str(&format!(
                "  - …and {} more breaking change(s){narrower}\n",
                report.breaking.len() - max_breaking
            ));
        }
    }
    if !report.warnings.is_empty() {
        out.push_str(&format!(
            "- **Warnings** ({}, not counted as breaking):\n",
            report.warnings.len()
        ));
        for f in report.warnings.iter().take(max_warnings) {
            out.push_str(&format!("  - {} — {}\n", finding_line(f), f.remediation));
        }
        if report.warnings.len() > max_warnings {
            out.push_str(&format!(
                "  - …and {} more warning(s){narrower}\n",
                report.warnings.len() - max_warnings
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::index::facts::{FileFacts, Symbol, SymbolKind};
    use crate::index::snapshot::{FileEntry, RootInfo};

    const PROTO: &str = r#"syntax = "proto3";
package acme.orders.v1;

service OrderService {
  rpc CreateOrder(CreateOrderRequest) returns (Order);
  rpc WatchOrders(stream WatchRequest) returns (stream Order);
  rpc SignUp(SignUpRequest) returns (Order);
}

service BatchService {
  rpc CreateOrderBatch(BatchRequest) returns (Order);
}
"#;

    fn file(root: u16, path: &str, lang: Language, facts: FileFacts) -> Arc<FileEntry> {
        let mut facts = facts;
        if path.ends_with(".pb.go") {
            facts.generated = true;
        }
        Arc::new(FileEntry::new(root, path, lang, 100, 0, facts))
    }

    fn method(name: &str, container: &str, line: u32) -> Symbol {
        Symbol {
            name: name.into(),
            kind: SymbolKind::Method,
            line,
            end_line: line + 3,
            doc_line: None,
            container: Some(container.into()),
        }
    }

    /// Service roots of the workspace `ws`, one per label, each at `ws/label`.
    fn service_roots(ws: &str, labels: &[&str]) -> Vec<RootInfo> {
        labels
            .iter()
            .map(|l| RootInfo {
                label: l.to_string(),
                path: PathBuf::from(ws).join(l),
                kind: crate::config::RootKind::Service,
            })
            .collect()
    }

    /// The facts of a file that holds only `grpc`.
    fn grpc_facts(grpc: Vec<GrpcFact>) -> FileFacts {
        FileFacts {
            grpc,
            ..FileFacts::default()
        }
    }

    /// A workspace of three roots: the contract (with a copy in the web app), a Go server with
    /// a test and a generated stub, and a TypeScript web app with a caller and a file that only
    /// builds a client.
    fn snapshot() -> Snapshot {
        let roots = service_roots("/ws", &["proto", "services/orders", "web"]);
        let go_server = FileFacts {
            symbols: vec![
                method("CreateOrder", "orderServer", 20),
                method("WatchOrders", "orderServer", 30),
            ],
            grpc: vec![GrpcFact::server("OrderService", Some("orderServer"), 12)],
            ..FileFacts::default()
        };
        let go_test = grpc_facts(vec![
            GrpcFact::client("OrderService", Some("c"), 5),
            GrpcFact::call("OrderService", "c", "CreateOrder", 9),
        ]);
        let generated = grpc_facts(vec![GrpcFact::call(
            "OrderService",
            "c",
            "CreateOrder",
            300,
        )]);
        let ts_caller = grpc_facts(vec![
            GrpcFact::client("OrderService", Some("client"), 3),
            GrpcFact::call("OrderService", "client", "createOrder", 14),
        ]);
        let ts_builder = grpc_facts(vec![GrpcFact::client("OrderService", Some("orders"), 7)]);
        let proto = crate::index::lang::protobuf::extract("orders.proto", PROTO);
        let files = vec![
            file(0, "orders.proto", Language::Protobuf, proto.clone()),
            file(2, "vendor/orders.proto", Language::Protobuf, proto),
            file(1, "server.go", Language::Go, go_server),
            file(1, "server_test.go", Language::Go, go_test),
            file(1, "orders.pb.go", Language::Go, generated),
            file(2, "src/api.ts", Language::TypeScript, ts_caller),
            file(2, "src/wiring.ts", Language::TypeScript, ts_builder),
        ];
        let mut snap = Snapshot::build(PathBuf::from("/ws"), roots, files, Vec::new());
        snap.generation = 7;
        snap
    }

    fn names(snap: &Snapshot, sel: &Selection) -> Vec<String> {
        sel.rpcs
            .iter()
            .map(|&r| {
                let rpc = &snap.graph.rpcs[r as usize];
                format!(
                    "{}.{}",
                    snap.graph.contracts[rpc.contract as usize].name, rpc.name
                )
            })
            .collect()
    }

    #[test]
    fn every_spelling_of_one_rpc_selects_it_alone() {
        let snap = snapshot();
        for target in [
            "CreateOrder",
            "createOrder",
            "create_order",
            "OrderService.CreateOrder",
            "acme.orders.v1.OrderService/CreateOrder",
            "OrderService/CreateOrder",
            "acme.orders.v1.OrderService.CreateOrder",
        ] {
            let sel = select(&snap.graph, target);
            assert_eq!(names(&snap, &sel), ["OrderService.CreateOrder"], "{target}");
            assert!(!sel.heuristic, "{target}");
        }
        let sel = select(&snap.graph, "CreateOrder");
        assert_eq!(sel.not_traced, ["BatchService.CreateOrderBatch"]);
        // Bare-name folding: SIGN_UP ↔ SignUp.
        let sel = select(&snap.graph, "SIGN_UP");
        assert_eq!(names(&snap, &sel), ["OrderService.SignUp"]);
    }

    #[test]
    fn a_service_or_package_selects_its_rpcs() {
        let snap = snapshot();
        let sel = select(&snap.graph, "OrderService");
        assert_eq!(
            names(&snap, &sel),
            [
                "OrderService.CreateOrder",
                "OrderService.WatchOrders",
                "OrderService.SignUp"
            ]
        );
        let sel = select(&snap.graph, "acme.orders.v1");
        assert_eq!(sel.rpcs.len(), 4);
        assert_eq!(sel.contracts.len(), 2);
    }

    #[test]
    fn substring_matches_are_traced_only_when_nothing_matches_by_name() {
        let snap = snapshot();
        let sel = select(&snap.graph, "Batch");
        assert!(sel.heuristic);
        assert_eq!(names(&snap, &sel), ["BatchService.CreateOrderBatch"]);
        let sel = select(&snap.graph, "Nothing");
        assert!(sel.rpcs.is_empty() && sel.contracts.is_empty());
    }

    fn render(target: &str, include_tests: bool) -> String {
        let snap = snapshot();
        let sel = select(&snap.graph, target);
        let t = trace(&snap, &sel, include_tests);
        render_trace(&snap, target, &sel, &t, MAX_OUTPUT_BYTES).0
    }

    #[test]
    fn one_rpc_end_to_end() {
        let text = render("OrderService.CreateOrder", false);
        assert!(
            text.contains("### Service `acme.orders.v1.OrderService` — `proto/orders.proto:4`"),
            "{text}"
        );
        assert!(
            text.contains("**Copies of the contract (1)**: `web/vendor/orders.proto:4`"),
            "{text}"
        );
        assert!(text.contains(
            "- **Definition**: `proto/orders.proto:5` — `rpc CreateOrder(CreateOrderRequest) returns (Order)`"
        ));
        assert!(text.contains("`/acme.orders.v1.OrderService/CreateOrder`"));
        assert!(
            text.contains("- go: `orderServer` at `services/orders/server.go:12` _(exact)_"),
            "{text}"
        );
        assert!(
            text.contains(
                "- go: `orderServer.CreateOrder` at `services/orders/server.go:20` _(exact)_"
            ),
            "{text}"
        );
        assert!(
            text.contains("- typescript: `client.createOrder` at `web/src/api.ts:14` _(exact)_"),
            "{text}"
        );
        // Only building a client: "may call", separately, saying what its root resolves.
        assert!(text.contains("**May call (1)**"), "{text}");
        assert!(
            text.contains(
                "- typescript: `orders` at `web/src/wiring.ts:7` _(service-level client, exact)_ — no call resolved in this file: may call any of its RPCs (its root calls CreateOrder elsewhere)"
            ),
            "{text}"
        );
        // The test call and its client are left out and counted; generated code never shows.
        assert!(!text.contains("server_test.go"), "{text}");
        // The test file's call and its client.
        assert!(
            text.contains("_2 matches in test files left out (pass `include_tests: true`"),
            "{text}"
        );
        assert!(!text.contains("orders.pb.go"), "{text}");
        assert!(
            text.contains("_Not traced: 1 other name(s) only contain"),
            "{text}"
        );

        let with_tests = render("OrderService.CreateOrder", true);
        assert!(
            with_tests.contains("- go: `c.CreateOrder` at `services/orders/server_test.go:9`"),
            "{with_tests}"
        );
        assert!(!with_tests.contains("left out"), "{with_tests}");
    }

    #[test]
    fn zeros_say_what_was_searched_and_streams_are_marked() {
        let text = render("WatchOrders", false);
        assert!(text.contains("`rpc WatchOrders(stream WatchRequest) returns (stream Order)`"));
        assert!(text.contains("- **Server handlers (1)**"), "{text}");
        // No call of WatchOrders, but a file builds a client: it may call.
        assert!(
            text.contains("**Client call sites: 0 resolved** — but 1 site builds a client of `OrderService`; read them"),
            "{text}"
        );
        let text = render("BatchService", false);
        assert!(text.contains(
            "- **Server handlers: 0 found** — no handler of `BatchService.CreateOrderBatch` in 7 indexed files in 3 root(s), index generation 7."
        ), "{text}");
        assert!(text.contains("- **Client call sites: 0 found**"), "{text}");
        assert!(text.contains("- **Server registrations: 0**"), "{text}");
        let text = render("NoSuchThing", false);
        assert!(text.contains("_No `.proto` service or RPC named `NoSuchThing` (or containing it) is indexed: searched 2 services and 4 RPCs from 2 `.proto` file(s) among 7 indexed files in 3 root(s), index generation 7._"), "{text}");
    }

    #[test]
    fn several_rpcs_of_a_service_list_may_call_once() {
        let text = render("OrderService", false);
        assert_eq!(text.matches("web/src/wiring.ts:7").count(), 1, "{text}");
        assert!(text.contains("- **Clients (2)**, 1 with no resolved call (they may call any of its RPCs; read them) — code that builds or registers a client of `OrderService`:"), "{text}");
        assert_eq!(text.matches("#### ").count(), 3);
    }

    #[test]
    fn a_small_budget_cuts_whole_rpcs_and_names_a_narrower_call() {
        let snap = snapshot();
        let sel = select(&snap.graph, "OrderService");
        let t = trace(&snap, &sel, false);
        let (full, _) = render_trace(&snap, "OrderService", &sel, &t, MAX_OUTPUT_BYTES);
        assert!(!full.contains("Cut to fit"), "{full}");
        let budget = full.len() - 200;
        let (text, _) = render_trace(&snap, "OrderService", &sel, &t, budget);
        assert!(text.len() <= budget, "{}", text.len());
        assert!(text.contains("_Cut to fit the answer:"), "{text}");
        assert!(
            text.contains("analyze_grpc(target: \"OrderService."),
            "{text}"
        );
    }

    #[test]
    fn code_naming_an_unindexed_service_is_listed() {
        let snap = snapshot();
        let sel = select(&snap.graph, "Payments");
        let mut snap2 = Snapshot::build(
            PathBuf::from("/ws"),
            snap.roots.clone(),
            vec![file(
                0,
                "pay.go",
                Language::Go,
                grpc_facts(vec![GrpcFact::client("PaymentsService", None, 4)]),
            )],
            Vec::new(),
        );
        snap2.generation = 1;
        let t = trace(&snap2, &sel, false);
        let (text, files) = render_trace(&snap2, "Payments", &sel, &t, MAX_OUTPUT_BYTES);
        assert!(text.contains("without an indexed contract (1)"), "{text}");
        assert!(text.contains("`proto/pay.go:4`"), "{text}");
        assert_eq!(files, ["proto/pay.go"]);
    }

    #[test]
    fn a_proto_gone_from_the_working_tree_is_skipped_or_an_error() {
        let gone = std::env::temp_dir().join(format!("mesh-gone-{}/x.proto", std::process::id()));
        let note = wire_section(&gone, "svc/x.proto", None, 1, &mut Vec::new()).unwrap();
        assert_eq!(
            note,
            "\n### Wire-format check: `svc/x.proto`\n_Skipped: `svc/x.proto` is not in the working tree any more (deleted since it was indexed)._\n"
        );
        let err = wire_section(&gone, "svc/x.proto", Some("main"), 1, &mut Vec::new()).unwrap_err();
        assert!(err.is_error);
        assert_eq!(
            err.text,
            "Cannot compare `svc/x.proto` with base `main`: `svc/x.proto` is not in the working tree any more (deleted since it was indexed)."
        );
    }

    #[test]
    fn the_whole_answer_stays_under_the_cap_with_many_rpcs_and_sites() {
        let mut proto = String::from("syntax = \"proto3\";\npackage big.v1;\nservice Big {\n");
        for i in 0..80 {
            proto.push_str(&format!("  rpc Method{i}(Req) returns (Res);\n"));
        }
        proto.push_str("}\n");
        let mut files = vec![file(
            0,
            "big.proto",
            Language::Protobuf,
            crate::index::lang::protobuf::extract("big.proto", &proto),
        )];
        for f in 0..20 {
            let mut grpc = vec![GrpcFact::client("Big", Some("c"), 1)];
            for i in 0..80 {
                grpc.push(GrpcFact::Call {
                    service: Some("Big".into()),
                    receiver: "c".into(),
                    method: format!("Method{i}"),
                    line: i + 2,
                });
            }
            files.push(file(
                1,
                &format!("caller_{f}.go"),
                Language::Go,
                FileFacts {
                    grpc,
                    ..FileFacts::default()
                },
            ));
        }
        let roots = service_roots("/nonexistent-ws", &["proto", "callers"]);
        let snap = Snapshot::build(PathBuf::from("/nonexistent-ws"), roots, files, Vec::new());
        let out = crate::tools::run_on(run, &snap, &json!({"target": "Big"}));
        assert!(!out.is_error, "{}", out.text);
        assert!(
            out.text.len() <= MAX_OUTPUT_BYTES - RESERVE_BYTES,
            "{}",
            out.text.len()
        );
        assert!(
            out.text.contains("_Cut to fit the answer: "),
            "{}",
            out.text
        );
        assert!(
            out.text.contains("analyze_grpc(target: \"Big.Method"),
            "{}",
            out.text
        );
        // The wire check still reports (the file is gone from this fake workspace).
        assert!(
            out.text
                .contains("### Wire-format check: `proto/big.proto`\n_Skipped: "),
            "{}",
            out.text
        );
        // One RPC alone lists its 20 callers (the per-list cap is 30); the RPCs whose names
        // only contain it are named, not traced.
        let out = crate::tools::run_on(run, &snap, &json!({"target": "Big.Method7"}));
        assert!(
            out.text.contains("- **Client call sites (20)**"),
            "{}",
            out.text
        );
        assert_eq!(
            out.text.matches("- go: `c.Method7` at").count(),
            20,
            "{}",
            out.text
        );
        assert!(
            out.text.contains(
                "_Not traced: 10 other name(s) only contain `Big.Method7`: `Big.Method70`"
            ),
            "{}",
            out.text
        );
    }

    #[test]
    fn long_reports_are_cut_with_a_narrower_call() {
        let mut base = String::from("syntax = \"proto3\";\nmessage A {\n");
        for i in 1..=60 {
            base.push_str(&format!("  string f{i} = {i};\n"));
        }
        base.push_str("}\n");
        let base = crate::index::lang::protobuf::extract("a.proto", &base)
            .proto
            .unwrap();
        let cur = crate::index::lang::protobuf::extract("a.proto", "message A {}")
            .proto
            .unwrap();
        let report = wire_check::compare(&base, &cur);
        assert_eq!(report.breaking.len(), 60);
        let text = render_report(&report, 13, 5, "p/a.proto");
        assert_eq!(
            text.matches("`WIRE_FORMAT_BREAKING_CHANGE` field deleted")
                .count(),
            13
        );
        assert!(text.contains(
            "  - …and 47 more breaking change(s); analyze_grpc(target: \"p/a.proto\") shows up to 40\n"
        ), "{text}");
    }

    #[test]
    fn report_rendering() {
        let base = crate::index::lang::protobuf::extract(
            "a.proto",
            "syntax = \"proto3\";\nmessage A { string a = 1; int32 b = 2; }\n",
        )
        .proto
        .unwrap();
        let cur = crate::index::lang::protobuf::extract(
            "a.proto",
            "syntax = \"proto3\";\nmessage A { string renamed = 1; }\n",
        )
        .proto
        .unwrap();
        let text = render_report(&wire_check::compare(&base, &cur), 40, 15, "a.proto");
        assert!(
            text.starts_with("- **Result**: 1 × `WIRE_FORMAT_BREAKING_CHANGE`\n"),
            "{text}"
        );
        assert!(text.contains("1. `WIRE_FORMAT_BREAKING_CHANGE` field deleted without `reserved`: `A.b` #2 (L2 in the base): `int32 b = 2` was removed\n     - Fix: add `reserved 2;` and `reserved \"b\";` to `A`"), "{text}");
        assert!(text.contains("- **Warnings** (1, not counted as breaking):\n  - renamed in place: `A.renamed` #1 (L2)"), "{text}");
        let text = render_report(&wire_check::compare(&base, &base), 40, 15, "a.proto");
        assert_eq!(
            text,
            "- **Result**: no `WIRE_FORMAT_BREAKING_CHANGE` — no wire-format changes.\n"
        );
    }
}
