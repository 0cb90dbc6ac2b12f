//! The `.proto` contract pass: RPCs and messages added, removed or changed with the wire verdict
//! of [`super::super::wire_check`], their callers, and RPCs whose handler body changed.

use super::super::analyze_impact;
use super::super::wire_check::WireReport;
use super::{
    Affected, ChangedFile, ContractChange, FileClass, Report, Risk, affected_of, decl_range,
    loc_text, owner_of,
};
use crate::index::facts::{GrpcFact, Language, ProtoFile};
use crate::index::graph::{Confidence, Loc, method_key};
use crate::index::snapshot::Snapshot;
use std::collections::{BTreeMap, BTreeSet};

/// `.proto` files: the wire verdict per message, changed RPCs, deleted or renamed RPCs.
pub(super) fn proto_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let mut out = Vec::new();
    // Every message changed in a changed `.proto`, by package, for the files that import it.
    let mut changed_anywhere: Vec<ChangedMessage> = Vec::new();
    let mut changed_files: BTreeSet<u32> = BTreeSet::new();
    for cf in &report.files {
        if !is_proto(snap, cf) {
            continue;
        }
        let current_bytes = cf.current_text.as_ref().map(|t| t.as_bytes().to_vec());
        let current = current_proto(snap, cf);
        let base = cf
            .base_facts
            .as_ref()
            .and_then(|f| f.proto.clone())
            .unwrap_or_default();
        let wire = match (&cf.base_bytes, &current_bytes) {
            (Some(b), Some(c)) => {
                match super::super::analyze_grpc::diff_proto_texts(&cf.display, b, c) {
                    Ok(r) => Some(r),
                    Err(why) => {
                        report_unresolved_push(&mut out, &cf.display, &why);
                        None
                    }
                }
            }
            _ => None,
        };
        // Findings by top-level message.
        let mut by_message = wire_findings(wire.as_ref());
        let changed_messages: BTreeSet<String> = crate::order::set_of(
            current
                .messages
                .iter()
                .filter(|m| !m.name.contains('.') && cf.touches(m.line, m.end_line))
                .map(|m| m.name.clone())
                .chain(by_message.iter().map(|(k, _)| k.clone())),
        );
        let mut changed_messages = changed_messages;
        let embeds = spread_to_embedders(&current, &mut changed_messages, &mut by_message);
        // Contracts (services) of this file in the graph.
        let contracts: Vec<u32> = cf
            .file
            .map(|fi| {
                (0..g.contracts.len() as u32)
                    .filter(|&c| g.contracts[c as usize].def.file == fi)
                    .collect()
            })
            .unwrap_or_default();
        let package = current.package.clone().or_else(|| base.package.clone());
        for m in &changed_messages {
            let (breaking, warnings) = findings_for(&by_message, m).cloned().unwrap_or_default();
            changed_anywhere.push(ChangedMessage {
                package: package.clone(),
                name: m.clone(),
                breaking,
                warnings,
            });
        }
        changed_files.extend(cf.file);
        let mut covered_messages: BTreeSet<String> = BTreeSet::new();
        out.extend(rpc_changes(
            snap,
            cf,
            &base,
            &contracts,
            &changed_messages,
            &by_message,
            &mut covered_messages,
        ));
        cover_embedded(&embeds, &mut covered_messages);
        // Messages changed that no RPC of this file carries (payloads, nested uses elsewhere):
        // owned by the service serving the file's RPCs, else by the file's place.
        let owner = contracts
            .iter()
            .flat_map(|&c| g.contracts[c as usize].rpcs.iter().copied())
            .find_map(|r| handlers_owner(snap, r))
            .or_else(|| servers_owner(snap, &contracts))
            .or_else(|| place_owner(cf.service.as_deref(), &cf.display));
        out.extend(message_changes(
            cf,
            &current,
            changed_messages.difference(&covered_messages),
            &by_message,
            owner,
        ));
        // RPCs of the base that are gone: deleted or renamed, with their live callers.
        out.extend(gone_rpcs(snap, cf, &base, &current));
    }
    let imported = importing_rpc_changes(snap, &changed_files, changed_anywhere, &out);
    out.extend(imported);
    report.contracts.extend(out);
}

/// True when changed file `cf` is a `.proto` (by name, by its base, or as the index read it).
fn is_proto(snap: &Snapshot, cf: &ChangedFile) -> bool {
    cf.display.to_ascii_lowercase().ends_with(".proto")
        || cf.base_bytes.is_some()
        || cf
            .file
            .is_some_and(|fi| snap.files[fi as usize].lang == Language::Protobuf)
}

/// The current model of a changed `.proto`: the index's, unless lone CRs end its lines (the
/// index may not read them as line ends), then read here as the base is.
fn current_proto(snap: &Snapshot, cf: &ChangedFile) -> ProtoFile {
    match (&cf.current_text, cf.file) {
        (Some(t), _) if cf.lone_cr => crate::index::lang::protobuf::extract(&cf.display, t)
            .proto
            .unwrap_or_default(),
        (_, fi) => fi
            .and_then(|fi| snap.files[fi as usize].facts().proto.clone())
            .unwrap_or_default(),
    }
}

/// Messages embedding a changed message change with it (a breaking change travels): adds them
/// to `changed`, with the inner message's findings marked `via`, until nothing more grows.
/// Returns the (outer, inner) embeddings found.
fn spread_to_embedders(
    current: &ProtoFile,
    changed: &mut BTreeSet<String>,
    by_message: &mut Vec<(String, Findings)>,
) -> Vec<(String, String)> {
    let bare = |t: &str| t.rsplit('.').next().unwrap_or(t).to_string();
    let mut embeds: Vec<(String, String)> = Vec::new();
    loop {
        let mut grew = false;
        for m in current.messages.iter().filter(|m| !m.name.contains('.')) {
            if changed.contains(&m.name) {
                continue;
            }
            let inner: Option<String> = m
                .fields
                .iter()
                .map(|f| bare(&f.type_name))
                .find(|t| changed.contains(t));
            if let Some(inner) = inner {
                embeds.push((m.name.clone(), inner.clone()));
                let (br, warn) = findings_for(by_message, &inner)
                    .cloned()
                    .unwrap_or_default();
                let entry = findings_of(by_message, m.name.clone());
                entry
                    .0
                    .extend(br.iter().map(|b| format!("via `{inner}`: {b}")));
                entry
                    .1
                    .extend(warn.iter().map(|w| format!("via `{inner}`: {w}")));
                changed.insert(m.name.clone());
                grew = true;
            }
        }
        if !grew {
            return embeds;
        }
    }
}

/// A message embedded in one an RPC carries is covered by that RPC's row: closes `covered`
/// over the `(outer, inner)` embeddings.
fn cover_embedded(embeds: &[(String, String)], covered: &mut BTreeSet<String>) {
    loop {
        let before = covered.len();
        for (outer, inner) in embeds {
            if covered.contains(outer) {
                covered.insert(inner.clone());
            }
        }
        if covered.len() == before {
            break;
        }
    }
}

/// A message changed in a changed `.proto`, with its wire findings.
#[derive(Debug, Clone)]
struct ChangedMessage {
    package: Option<String>,
    /// The top-level name within its file.
    name: String,
    breaking: Vec<String>,
    warnings: Vec<String>,
}

impl ChangedMessage {
    fn qualified(&self) -> String {
        match &self.package {
            Some(p) if !p.is_empty() => format!("{p}.{}", self.name),
            _ => self.name.clone(),
        }
    }

    /// True when a type written `type_name` in a file of package `from` names this message:
    /// fully qualified (with or without the leading dot), relative to an enclosing package, or
    /// bare in the same package.
    fn named_by(&self, type_name: &str, from: Option<&str>) -> bool {
        let t = type_name.trim_start_matches('.');
        // A nested type (`Money.Unit`) is part of its top-level message.
        let fq = self.qualified();
        if t == fq || t.starts_with(&format!("{fq}.")) {
            return true;
        }
        let same_package = self.package.as_deref().unwrap_or("") == from.unwrap_or("");
        if same_package && (t == self.name || t.starts_with(&format!("{}.", self.name))) {
            return true;
        }
        // Relative to a package that encloses the writer's (`common.v1.Money` from `acme.x`).
        t.contains('.') && fq.ends_with(&format!(".{t}"))
    }
}

/// RPCs of unchanged `.proto` files whose request or response carries (directly or through
/// messages that embed it) a message changed in another file: `ledger.proto` importing
/// `money.proto` breaks with `Money`. Rows already given (by name) are not repeated.
fn importing_rpc_changes(
    snap: &Snapshot,
    changed_files: &BTreeSet<u32>,
    mut changed: Vec<ChangedMessage>,
    done: &[ContractChange],
) -> Vec<ContractChange> {
    let g = &snap.graph;
    let protos: Vec<(u32, &ProtoFile)> = snap
        .files
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            f.lang == Language::Protobuf && !f.is_test && !changed_files.contains(&(*i as u32))
        })
        .filter_map(|(i, f)| f.facts().proto.as_ref().map(|p| (i as u32, p)))
        .collect();
    if changed.is_empty() || protos.is_empty() {
        return Vec::new();
    }
    // Messages of the importing files that embed a changed one, to a fixed point (a message
    // embedding one that embeds the changed one changes too).
    let mut via: BTreeSet<(u32, String)> = BTreeSet::new();
    loop {
        let mut grew = false;
        for &(fi, p) in &protos {
            for m in &p.messages {
                let top = m.name.split('.').next().unwrap_or(&m.name).to_string();
                if via.contains(&(fi, top.clone())) {
                    continue;
                }
                let hit = m.fields.iter().find_map(|f| {
                    changed.iter().position(|c| {
                        field_types(&f.type_name)
                            .iter()
                            .any(|t| c.named_by(t, p.package.as_deref()))
                    })
                });
                if let Some(i) = hit {
                    let inner = changed[i].clone();
                    let name = inner.qualified();
                    changed.push(ChangedMessage {
                        package: p.package.clone(),
                        name: top.clone(),
                        breaking: inner
                            .breaking
                            .iter()
                            .map(|b| format!("via `{name}`: {b}"))
                            .collect(),
                        warnings: inner
                            .warnings
                            .iter()
                            .map(|w| format!("via `{name}`: {w}"))
                            .collect(),
                    });
                    via.insert((fi, top));
                    grew = true;
                }
            }
        }
        if !grew {
            break;
        }
    }
    let mut out: Vec<ContractChange> = Vec::new();
    for &(fi, p) in &protos {
        for c in (0..g.contracts.len() as u32).filter(|&c| g.contracts[c as usize].def.file == fi) {
            for &r in &g.contracts[c as usize].rpcs {
                let rpc = &g.rpcs[r as usize];
                let name = format!("{}.{}", g.contracts[c as usize].name, rpc.name);
                if done
                    .iter()
                    .chain(out.iter())
                    .any(|d| d.kind == "rpc" && d.name == name)
                {
                    continue;
                }
                let mut why = Vec::new();
                let mut risk = Risk::Behaviour;
                for t in [&rpc.request, &rpc.response] {
                    let Some(m) = changed.iter().find(|m| m.named_by(t, p.package.as_deref()))
                    else {
                        continue;
                    };
                    if !m.breaking.is_empty() {
                        risk = Risk::Breaking;
                        why.push(format!("`{}`: {}", m.name, m.breaking.join("; ")));
                    } else if !m.warnings.is_empty() {
                        why.push(format!(
                            "`{}` changed, wire-compatible (warnings: {})",
                            m.name,
                            m.warnings.join("; ")
                        ));
                    } else {
                        why.push(format!("`{}` changed, wire-compatible", m.name));
                    }
                }
                if why.is_empty() {
                    continue;
                }
                why.dedup();
                let change = format!("{} (imported message changed)", why.join("; "));
                out.push(rpc_change(snap, c, r, name, change, risk));
            }
        }
    }
    out
}

/// The message types a field's type names: itself, or a map's key and value.
fn field_types(type_name: &str) -> Vec<&str> {
    match type_name
        .strip_prefix("map<")
        .and_then(|t| t.strip_suffix('>'))
    {
        Some(kv) => kv.split(',').map(str::trim).collect(),
        None => vec![type_name],
    }
}

/// The rows of the file's RPCs whose declaration changed or whose request or response message
/// is among `changed_messages` (with its wire findings); the messages they carry go into
/// `covered_messages`.
fn rpc_changes(
    snap: &Snapshot,
    cf: &ChangedFile,
    base: &ProtoFile,
    contracts: &[u32],
    changed_messages: &BTreeSet<String>,
    by_message: &[(String, Findings)],
    covered_messages: &mut BTreeSet<String>,
) -> Vec<ContractChange> {
    let g = &snap.graph;
    let bare = |t: &str| t.rsplit('.').next().unwrap_or(t).to_string();
    let current_text = cf.current_text.as_deref();
    let mut out = Vec::new();
    for &c in contracts {
        for &r in &g.contracts[c as usize].rpcs {
            let rpc = &g.rpcs[r as usize];
            let mut why = Vec::new();
            let mut risk = Risk::Behaviour;
            if cf.touches(rpc.def.line, rpc.def.line) {
                let was = base
                    .services
                    .iter()
                    .filter(|s| s.name == g.contracts[c as usize].name)
                    .flat_map(|s| s.rpcs.iter())
                    .find(|b| method_key(&b.name) == method_key(&rpc.name));
                // A declaration that reads as in the base only moved.
                let now = current_text.map(|t| super::span_text(t, rpc.def.line, rpc.def.line));
                match was {
                    Some(b) if cf.base_span(b.line, b.line) == now => {}
                    Some(_) => why.push("RPC declaration changed".to_string()),
                    None => why.push("RPC added (or renamed to this name)".to_string()),
                }
            }
            for m in [bare(&rpc.request), bare(&rpc.response)] {
                if changed_messages.contains(&m) {
                    covered_messages.insert(m.clone());
                    match findings_for(by_message, &m) {
                        Some((br, _)) if !br.is_empty() => {
                            risk = Risk::Breaking;
                            why.push(format!("`{m}`: {}", br.join("; ")));
                        }
                        Some((_, warn)) if !warn.is_empty() => {
                            why.push(format!(
                                "`{m}` changed, wire-compatible (warnings: {})",
                                warn.join("; ")
                            ));
                        }
                        _ => why.push(format!("`{m}` changed, wire-compatible")),
                    }
                }
            }
            if why.is_empty() {
                continue;
            }
            let name = format!("{}.{}", g.contracts[c as usize].name, rpc.name);
            out.push(rpc_change(snap, c, r, name, why.join("; "), risk));
        }
    }
    out
}

/// The row of RPC `r` of service `c`, changed as `change`: its callers are the affected, its
/// owner the service handling it, else serving `c`, else where the RPC is declared.
fn rpc_change(
    snap: &Snapshot,
    c: u32,
    r: u32,
    name: String,
    change: String,
    risk: Risk,
) -> ContractChange {
    let rpc = &snap.graph.rpcs[r as usize];
    let (rows, _, _) = analyze_impact::rpc_rows(snap, &[c], &[r]);
    ContractChange {
        kind: "rpc",
        name,
        location: loc_text(snap, rpc.def),
        change,
        risk,
        owner: handlers_owner(snap, r)
            .or_else(|| servers_owner(snap, &[c]))
            .or_else(|| def_owner(snap, rpc.def)),
        affected: affected_of(snap, rows),
    }
}

/// The top-level message of a wire finding's element (`Order` for `Order.Item.sku`).
fn top_message(element: &str) -> String {
    element.split('.').next().unwrap_or("").to_string()
}

/// The wire findings (breaking changes, warnings) by top-level message name: a short list
/// searched by scan (one map type less in the binary: the size budget, docs/ARCHITECTURE.md §7).
fn wire_findings(wire: Option<&WireReport>) -> Vec<(String, Findings)> {
    let mut by_message: Vec<(String, Findings)> = Vec::new();
    if let Some(w) = wire {
        for f in &w.breaking {
            let text = format!(
                "`WIRE_FORMAT_BREAKING_CHANGE` {}: `{}` #{} — {}",
                f.rule.label(),
                f.element,
                f.number,
                f.detail
            );
            findings_of(&mut by_message, top_message(&f.element))
                .0
                .push(text);
        }
        for f in &w.warnings {
            let text = format!("{}: `{}` — {}", f.rule.label(), f.element, f.detail);
            findings_of(&mut by_message, top_message(&f.element))
                .1
                .push(text);
        }
    }
    by_message
}

/// The rows of the `changed` messages that no RPC of the file carries, with their findings.
fn message_changes<'m>(
    cf: &ChangedFile,
    current: &ProtoFile,
    changed: impl Iterator<Item = &'m String>,
    by_message: &[(String, Findings)],
    owner: Option<String>,
) -> Vec<ContractChange> {
    let mut out = Vec::new();
    for m in changed {
        let (br, warn) = findings_for(by_message, m).cloned().unwrap_or_default();
        let line = current
            .messages
            .iter()
            .find(|x| &x.name == m)
            .map_or(0, |x| x.line);
        out.push(ContractChange {
            kind: "message",
            name: m.clone(),
            location: format!("{}:{line}", cf.display),
            change: if !br.is_empty() {
                br.join("; ")
            } else if !warn.is_empty() {
                format!("wire-compatible (warnings: {})", warn.join("; "))
            } else {
                "changed, wire-compatible".to_string()
            },
            risk: Risk::breaking_if(!br.is_empty()),
            owner: owner.clone(),
            affected: Vec::new(),
        });
    }
    out
}

/// The RPCs of the base file that are gone from `current`: deleted or renamed, with their live
/// callers.
fn gone_rpcs(
    snap: &Snapshot,
    cf: &ChangedFile,
    base: &ProtoFile,
    current: &ProtoFile,
) -> Vec<ContractChange> {
    let g = &snap.graph;
    let mut out = Vec::new();
    for bs in &base.services {
        let cur_svc = current.services.iter().find(|s| s.name == bs.name);
        for br in &bs.rpcs {
            let still = cur_svc.is_some_and(|s| {
                s.rpcs
                    .iter()
                    .any(|r| method_key(&r.name) == method_key(&br.name))
            });
            if still {
                continue;
            }
            let renamed_to = cur_svc.and_then(|s| {
                s.rpcs
                    .iter()
                    .find(|r| {
                        r.request == br.request
                            && r.response == br.response
                            && !bs.rpcs.iter().any(|o| o.name == r.name)
                    })
                    .map(|r| r.name.clone())
            });
            let callers = callers_of_deleted(snap, &bs.name, &br.name);
            let change = match (&renamed_to, cur_svc) {
                // The wire check (analyze_grpc) compares message shapes, which a rename keeps:
                // say so, and that what breaks is the name in the path clients call.
                (Some(n), _) => {
                    let path = match base.package.as_deref() {
                        Some(p) if !p.is_empty() => format!("/{p}.{}/{}", bs.name, br.name),
                        _ => format!("/{}/{}", bs.name, br.name),
                    };
                    format!(
                        "RPC renamed to `{}.{n}`: the wire shape is unchanged (same messages), but the method name, and so the path clients call (`{path}`), changed: clients still calling `{}` fail with UNIMPLEMENTED",
                        bs.name, br.name
                    )
                }
                (None, Some(_)) => "RPC deleted".to_string(),
                (None, None) => "RPC deleted with its service".to_string(),
            };
            let live = callers.iter().filter(|a| a.external).count();
            let change = if callers.is_empty() {
                format!("{change}; no live caller found")
            } else {
                format!(
                    "{change}; {} live caller(s), {live} in other services",
                    callers.len()
                )
            };
            let owner = g
                .contracts_named(&bs.name)
                .iter()
                .flat_map(|&c| g.contracts[c as usize].rpcs.iter().copied())
                .find_map(|r| handlers_owner(snap, r))
                .or_else(|| servers_owner(snap, &g.contracts_named(&bs.name)))
                .or_else(|| place_owner(cf.service.as_deref(), &cf.display));
            out.push(ContractChange::left_behind(
                "rpc",
                format!("{}.{}", bs.name, br.name),
                cf.base_location(br.line),
                change,
                owner,
                callers,
            ));
        }
    }
    out
}

/// The breaking changes and the warnings of one message.
type Findings = (Vec<String>, Vec<String>);

/// The findings of `message`, added empty when it has none yet.
fn findings_of(list: &mut Vec<(String, Findings)>, message: String) -> &mut Findings {
    let i = match list.iter().position(|(m, _)| *m == message) {
        Some(i) => i,
        None => {
            list.push((message, Findings::default()));
            list.len() - 1
        }
    };
    &mut list[i].1
}

/// The findings of `message`, if any were recorded.
fn findings_for<'a>(list: &'a [(String, Findings)], message: &str) -> Option<&'a Findings> {
    list.iter().find(|(m, _)| m == message).map(|(_, f)| f)
}

fn report_unresolved_push(out: &mut Vec<ContractChange>, display: &str, why: &str) {
    out.push(ContractChange {
        kind: "message",
        name: display.to_string(),
        location: format!("{display}:1"),
        change: format!("wire check not run: {why}"),
        risk: Risk::Behaviour,
        owner: None,
        affected: Vec::new(),
    });
}

/// Call sites in code of an RPC that no longer exists: `Call` facts naming the method on a
/// receiver of the service (or in a file that builds a client of it).
fn callers_of_deleted(snap: &Snapshot, service: &str, method: &str) -> Vec<Affected> {
    let g = &snap.graph;
    let key = method_key(method);
    let svc_key = method_key(service);
    let service_matches = |s: &str| {
        let k = method_key(s.rsplit(['.', '/']).next().unwrap_or(s));
        k == svc_key
            || k.trim_end_matches("client") == svc_key
            || k.trim_end_matches("stub") == svc_key
    };
    let contracts: Vec<u32> = g.contracts_named(service);
    let client_files: BTreeSet<u32> = crate::order::set_of(
        g.clients
            .iter()
            .filter(|c| contracts.contains(&c.contract))
            .map(|c| c.at.file),
    );
    let owners: BTreeSet<u16> = crate::order::set_of(
        g.handlers
            .iter()
            .filter(|h| contracts.contains(&g.rpcs[h.rpc as usize].contract))
            .map(|h| snap.files[h.at.file as usize].root)
            .chain(
                g.servers
                    .iter()
                    .filter(|s| contracts.contains(&s.contract))
                    .map(|s| snap.files[s.at.file as usize].root),
            ),
    );
    let mut out = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        if f.is_test || f.generated {
            continue;
        }
        let facts = f.facts();
        let file_clients: Vec<&GrpcFact> = facts
            .grpc
            .iter()
            .filter(|x| matches!(x, GrpcFact::Client { service, .. } if service_matches(service)))
            .collect();
        for fact in &facts.grpc {
            let GrpcFact::Call {
                service: call_svc,
                receiver,
                method: m,
                line,
            } = fact
            else {
                continue;
            };
            if method_key(m) != key {
                continue;
            }
            let exact = call_svc.as_deref().is_some_and(service_matches)
                || file_clients.iter().any(|c| {
                    matches!(c, GrpcFact::Client { var: Some(v), .. } if v == receiver || receiver.ends_with(&format!(".{v}")))
                });
            let heuristic =
                !exact && (client_files.contains(&(fi as u32)) || !file_clients.is_empty());
            if !exact && !heuristic {
                continue;
            }
            let at = Loc {
                file: fi as u32,
                line: *line,
            };
            out.push(Affected {
                service: analyze_impact::root_label(snap, f.root).to_string(),
                external: !owners.contains(&f.root),
                role: "caller".into(),
                element: analyze_impact::enclosing(snap, at).unwrap_or_else(|| receiver.clone()),
                location: loc_text(snap, at),
                confidence: if exact {
                    Confidence::Exact.label()
                } else {
                    Confidence::Heuristic.label()
                },
            });
        }
    }
    crate::order::sort_by_cached_key(&mut out, |a| (!a.external, a.location.clone()));
    out
}

/// RPC handlers whose body changed (the `.proto` unchanged for that RPC).
pub(super) fn handler_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let already: BTreeSet<String> =
        crate::order::set_of(report.contracts.iter().map(|c| c.name.clone()));
    let mut by_rpc: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        let Some(fi) = cf.file else { continue };
        for h in g.handlers.iter().filter(|h| h.at.file == fi) {
            let range = decl_range(snap, fi, h.at.line, None).unwrap_or((h.at.line, h.at.line));
            if cf.touches(range.0, range.1) {
                by_rpc.entry(h.rpc).or_default().push(format!(
                    "`{}` ({})",
                    h.label,
                    loc_text(snap, h.at)
                ));
            }
        }
    }
    for (r, handlers) in by_rpc {
        let rpc = &g.rpcs[r as usize];
        let name = format!("{}.{}", g.contracts[rpc.contract as usize].name, rpc.name);
        if already.contains(&name) {
            continue;
        }
        let (rows, _, _) = analyze_impact::rpc_rows(snap, &[rpc.contract], &[r]);
        report.contracts.push(ContractChange {
            kind: "rpc",
            name,
            location: loc_text(snap, rpc.def),
            change: format!(
                "handler body changed: {} (the contract is unchanged; behaviour may differ)",
                handlers.join(", ")
            ),
            risk: Risk::Behaviour,
            owner: handlers_owner(snap, r),
            affected: affected_of(snap, rows),
        });
    }
}

/// The service registering a server of one of the contracts (outside tests): the owner of
/// an RPC no handler implements (renamed, deleted, or added and not implemented yet).
fn servers_owner(snap: &Snapshot, contracts: &[u32]) -> Option<String> {
    snap.graph
        .servers
        .iter()
        .find(|s| contracts.contains(&s.contract) && !snap.files[s.at.file as usize].is_test)
        .and_then(|s| owner_of(snap, s.at))
}

/// The owner of a `.proto` no service serves: its root, or for the workspace's own root (`.`,
/// often a shared `contracts/` tree) the file's directory, which says more than `.`.
fn place_owner(root: Option<&str>, display: &str) -> Option<String> {
    match root {
        Some(r) if r != "." => Some(r.to_string()),
        _ => Some(
            display
                .rsplit_once('/')
                .map_or(".", |(dir, _)| dir)
                .to_string(),
        ),
    }
}

/// [`place_owner`] of the file declaring an RPC.
fn def_owner(snap: &Snapshot, at: Loc) -> Option<String> {
    let f = &snap.files[at.file as usize];
    place_owner(owner_of(snap, at).as_deref(), &snap.display_path(f))
}

fn handlers_owner(snap: &Snapshot, rpc: u32) -> Option<String> {
    snap.graph
        .handlers
        .iter()
        .find(|h| h.rpc == rpc && !snap.files[h.at.file as usize].is_test)
        .and_then(|h| owner_of(snap, h.at))
}
