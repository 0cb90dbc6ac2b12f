//! RPC targets: a service or method resolved by name, and the rows of its handlers, servers,
//! clients and callers.

use std::collections::{BTreeSet, HashSet};

use super::{Role, Row, Subject, root_of};
use crate::index::graph::{Confidence, Graph, Loc, method_key};
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;

pub(super) fn resolve_rpc(g: &Graph, target: &str) -> Option<Subject> {
    if target.contains(' ') || target.starts_with('/') {
        return None;
    }
    // `pkg.Service/Method` and `Service.Method`.
    let split = target
        .rsplit_once('/')
        .or_else(|| target.rsplit_once('.'))
        .filter(|(s, m)| !s.is_empty() && !m.is_empty());
    if let Some((svc, method)) = split {
        let contracts: Vec<u32> = crate::order::set_of(
            g.contracts_named(svc).into_iter().chain(
                (0..g.contracts.len() as u32)
                    .filter(|&c| g.contracts[c as usize].fqn.eq_ignore_ascii_case(svc)),
            ),
        )
        .into_iter()
        .collect();
        let key = method_key(method);
        let rpcs: Vec<u32> = contracts
            .iter()
            .flat_map(|&c| g.contracts[c as usize].rpcs.iter().copied())
            .filter(|&r| method_key(&g.rpcs[r as usize].name) == key)
            .collect();
        if !rpcs.is_empty() {
            return Some(Subject::Rpcs { contracts, rpcs });
        }
    }
    // A whole service.
    let contracts: Vec<u32> = (0..g.contracts.len() as u32)
        .filter(|&c| {
            let k = &g.contracts[c as usize];
            k.name.eq_ignore_ascii_case(target) || k.fqn.eq_ignore_ascii_case(target)
        })
        .collect();
    if !contracts.is_empty() {
        let rpcs = contracts
            .iter()
            .flat_map(|&c| g.contracts[c as usize].rpcs.iter().copied())
            .collect();
        return Some(Subject::Rpcs { contracts, rpcs });
    }
    // A bare method name.
    let key = method_key(target);
    let rpcs: Vec<u32> = (0..g.rpcs.len() as u32)
        .filter(|&r| method_key(&g.rpcs[r as usize].name) == key)
        .collect();
    if rpcs.is_empty() {
        return None;
    }
    let contracts = crate::order::set_of(rpcs.iter().map(|&r| g.rpcs[r as usize].contract))
        .into_iter()
        .collect();
    Some(Subject::Rpcs { contracts, rpcs })
}

pub(crate) fn rpc_rows(
    snap: &Snapshot,
    contracts: &[u32],
    rpcs: &[u32],
) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    let g = &snap.graph;
    let rpc_set: HashSet<u32> = rpcs.iter().copied().collect();
    // Owners: roots of the handlers (or server registrations), else of the .proto.
    let mut owners: BTreeSet<u16> = crate::order::set_of(
        g.handlers
            .iter()
            .filter(|h| rpc_set.contains(&h.rpc))
            .map(|h| root_of(snap, h.at))
            .chain(
                g.servers
                    .iter()
                    .filter(|s| contracts.contains(&s.contract))
                    .map(|s| root_of(snap, s.at)),
            )
            .filter(|&r| !snap.files.is_empty() && (r as usize) < snap.roots.len()),
    );
    // Test handlers do not make a root an owner.
    owners.retain(|&r| {
        g.handlers.iter().any(|h| {
            rpc_set.contains(&h.rpc)
                && root_of(snap, h.at) == r
                && !snap.files[h.at.file as usize].is_test
        }) || g.servers.iter().any(|s| {
            contracts.contains(&s.contract)
                && root_of(snap, s.at) == r
                && !snap.files[s.at.file as usize].is_test
        })
    });
    if owners.is_empty() {
        owners = crate::order::set_of(
            contracts
                .iter()
                .map(|&c| root_of(snap, g.contracts[c as usize].def)),
        );
    }
    let ext = |l: Loc| !owners.contains(&root_of(snap, l));
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let shown: Vec<String> = contracts
        .iter()
        .take(5)
        .map(|&c| {
            let k = &g.contracts[c as usize];
            format!(
                "{} ({})",
                inline_code(&k.fqn),
                crate::render::code_loc(
                    &snap.display_path(&snap.files[k.def.file as usize]),
                    k.def.line
                )
            )
        })
        .collect();
    notes.insert(
        0,
        format!(
            "_Contract(s): {}{}_",
            shown.join(", "),
            if contracts.len() > 5 {
                format!(" … and {} more", contracts.len() - 5)
            } else {
                String::new()
            }
        ),
    );
    for h in g.handlers.iter().filter(|h| rpc_set.contains(&h.rpc)) {
        let rpc = &g.rpcs[h.rpc as usize];
        rows.push(Row {
            role: Role::Handler,
            element: h.label.clone(),
            at: Some(h.at),
            confidence: h.confidence,
            via: format!("{}.{}", g.contracts[rpc.contract as usize].name, rpc.name),
            external: ext(h.at),
        });
    }
    let mut calling_files: HashSet<(u32, u32)> = HashSet::new();
    for c in g.calls.iter().filter(|c| rpc_set.contains(&c.rpc)) {
        let rpc = &g.rpcs[c.rpc as usize];
        calling_files.insert((c.at.file, rpc.contract));
        rows.push(Row {
            role: Role::Client,
            element: c.label.clone(),
            at: Some(c.at),
            confidence: c.confidence,
            via: format!("{}.{}", g.contracts[rpc.contract as usize].name, rpc.name),
            external: ext(c.at),
        });
    }
    // Clients with no resolved call of the service in their file: they may call it
    // (heuristic at best). The same rule as analyze_grpc's "may call".
    let _ = &calling_files;
    let open: HashSet<u32> = contracts
        .iter()
        .flat_map(|&c| crate::tools::analyze_grpc::client_resolution(snap, c))
        .filter(|(_, in_file, _)| in_file.is_empty())
        .map(|(i, _, _)| i)
        .collect();
    for (ci, cl) in g.clients.iter().enumerate() {
        if !contracts.contains(&cl.contract) || !open.contains(&(ci as u32)) {
            continue;
        }
        rows.push(Row {
            role: Role::Client,
            element: format!("{} (builds a client)", cl.label),
            at: Some(cl.at),
            confidence: cl.confidence.max(Confidence::Heuristic),
            via: g.contracts[cl.contract as usize].name.clone(),
            external: ext(cl.at),
        });
    }
    if !rows.iter().any(|r| {
        r.role == Role::Client && r.at.is_some_and(|l| !snap.files[l.file as usize].is_test)
    }) {
        let sites: BTreeSet<u32> = g
            .calls
            .iter()
            .map(|c| c.at.file)
            .chain(g.clients.iter().map(|c| c.at.file))
            .collect();
        let roots: BTreeSet<u16> = sites.iter().map(|&f| snap.files[f as usize].root).collect();
        notes.push(format!(
            "**No client found** outside tests: searched {} gRPC call site(s) and {} client construction(s) in {} file(s) across {} of {} root(s).",
            g.calls.len(),
            g.clients.len(),
            sites.len(),
            roots.len(),
            snap.roots.len()
        ));
    }
    (rows, owners.into_iter().collect(), notes)
}
