//! The graph folded into cross-service links, one per (from, to, kind), with their sites.

use std::collections::BTreeMap;

use super::services::{WORKSPACE_ROOT, group_of, library_users};
use super::view::{ConfidenceCounts, LinkKind, MeshLink};
use crate::index::facts::EventRole;
use crate::index::graph::{Confidence, Loc};
use crate::index::snapshot::Snapshot;

#[derive(Default)]
pub(super) struct Fold {
    pub(super) count: u32,
    pub(super) confidence: Option<Confidence>,
    pub(super) counts: ConfidenceCounts,
    pub(super) example: Option<(String, u32)>,
}

impl Fold {
    /// The drawn link for this fold.
    pub(super) fn link(&self, from: String, to: String, kind: LinkKind) -> MeshLink {
        MeshLink {
            from,
            to,
            kind,
            count: self.count,
            confidence: self.confidence.unwrap_or(Confidence::Exact).label(),
            confidence_counts: self.counts,
            example: self
                .example
                .as_ref()
                .map(|(p, l)| format!("{p}:{l}"))
                .unwrap_or_default(),
        }
    }

    pub(super) fn add(&mut self, conf: Confidence, evidence: (String, u32)) {
        self.count += 1;
        self.counts.add(conf, 1);
        self.confidence = Some(self.confidence.map_or(conf, |c| c.max(conf)));
        if self.example.as_ref().is_none_or(|e| evidence < *e) {
            self.example = Some(evidence);
        }
    }
}

/// Every cross-service link, folded by (from, to, kind); endpoints are group names, topics are
/// `topic:<name>`.
pub(super) fn folded_links(snap: &Snapshot) -> (BTreeMap<(String, String, LinkKind), Fold>, usize) {
    let g = &snap.graph;
    let mut out: BTreeMap<(String, String, LinkKind), Fold> = BTreeMap::new();
    let mut ambiguous = 0;
    let usable = |l: Loc| {
        let f = &snap.files[l.file as usize];
        !f.is_test && !f.generated
    };
    let evidence = |l: Loc| (snap.display_path(&snap.files[l.file as usize]), l.line);
    let users = library_users(snap);
    let callers_of = |file: u32| -> Vec<String> {
        users
            .get(&snap.files[file as usize].root)
            .cloned()
            .unwrap_or_else(|| vec![group_of(snap, file)])
    };
    // Owners of each contract: the groups of its handlers/servers, else of its definition.
    let mut owners: Vec<Vec<String>> = vec![Vec::new(); g.contracts.len()];
    for h in &g.handlers {
        if usable(h.at) {
            owners[g.rpcs[h.rpc as usize].contract as usize].push(group_of(snap, h.at.file));
        }
    }
    for s in &g.servers {
        if usable(s.at) {
            owners[s.contract as usize].push(group_of(snap, s.at.file));
        }
    }
    for (c, o) in owners.iter_mut().enumerate() {
        if o.is_empty() {
            o.push(group_of(snap, g.contracts[c].def.file));
        }
        crate::order::sort(o);
        o.dedup();
    }
    let mut calling: std::collections::HashSet<(u32, u32)> = Default::default();
    for call in &g.calls {
        if !usable(call.at) {
            continue;
        }
        let contract = g.rpcs[call.rpc as usize].contract;
        calling.insert((call.at.file, contract));
        if call.confidence == Confidence::Ambiguous && owners[contract as usize].len() > 1 {
            ambiguous += 1;
            continue;
        }
        for from in callers_of(call.at.file) {
            for to in &owners[contract as usize] {
                if *to != from {
                    out.entry((from.clone(), to.clone(), LinkKind::Grpc))
                        .or_default()
                        .add(call.confidence, evidence(call.at));
                }
            }
        }
    }
    for cl in &g.clients {
        if !usable(cl.at) || calling.contains(&(cl.at.file, cl.contract)) {
            continue;
        }
        for from in callers_of(cl.at.file) {
            for to in &owners[cl.contract as usize] {
                if *to != from {
                    out.entry((from.clone(), to.clone(), LinkKind::Grpc))
                        .or_default()
                        .add(cl.confidence.max(Confidence::Heuristic), evidence(cl.at));
                }
            }
        }
    }
    for e in &g.events {
        // A framework lifecycle event links no two services.
        if !usable(e.at) || e.via == crate::index::facts::FRAMEWORK_EVENT_VIA {
            continue;
        }
        let group = group_of(snap, e.at.file);
        let topic = format!("topic:{}", g.topics[e.topic as usize].name);
        let key = match e.role {
            EventRole::Producer => (group, topic, LinkKind::Produces),
            EventRole::Consumer => (topic, group, LinkKind::Consumes),
        };
        out.entry(key)
            .or_default()
            .add(e.confidence, evidence(e.at));
    }
    for rc in &g.route_calls {
        // A health check is the deployment calling the service itself: no service link.
        if !usable(rc.at) || rc.probe {
            continue;
        }
        let to = group_of(snap, g.routes[rc.route as usize].at.file);
        for from in callers_of(rc.at.file) {
            if from != to {
                out.entry((from, to.clone(), LinkKind::Http))
                    .or_default()
                    .add(rc.confidence, evidence(rc.at));
            }
        }
    }
    for ie in &g.import_links {
        if !usable(ie.at) {
            continue;
        }
        let from = group_of(snap, ie.at.file);
        let to = snap
            .roots
            .get(ie.to_root as usize)
            .map(|r| {
                if r.label == "." {
                    WORKSPACE_ROOT.to_string()
                } else {
                    r.label.clone()
                }
            })
            .unwrap_or_default();
        if snap.roots.len() > 1 && from != to {
            out.entry((from, to, LinkKind::Imports))
                .or_default()
                .add(ie.confidence, evidence(ie.at));
        }
    }
    (out, ambiguous)
}

#[cfg(test)]
mod tests {
    use super::super::services::library_users;
    use super::*;
    use crate::index::facts::*;

    #[test]
    fn a_link_of_mixed_confidence_counts_each() {
        let mut fold = Fold::default();
        for conf in [
            Confidence::Heuristic,
            Confidence::Ambiguous,
            Confidence::Heuristic,
            Confidence::Exact,
        ] {
            fold.add(conf, ("a.go".into(), 1));
        }
        let link = fold.link("n0".into(), "n1".into(), LinkKind::Http);
        assert_eq!(link.confidence, "ambiguous");
        assert!(!link.confidence_counts.is_uniform());
        assert_eq!(
            link.confidence_counts.describe(),
            "1 exact, 2 heuristic, 1 ambiguous"
        );
        let json = serde_json::to_value(&link).unwrap();
        assert_eq!(json["confidence_counts"]["heuristic"], 2);
        // One confidence only: the counts add nothing and are left out.
        let mut same = Fold::default();
        same.add(Confidence::Heuristic, ("a.go".into(), 1));
        same.add(Confidence::Heuristic, ("b.go".into(), 1));
        let json =
            serde_json::to_value(same.link("n0".into(), "n1".into(), LinkKind::Http)).unwrap();
        assert!(json.get("confidence_counts").is_none());
    }

    #[test]
    fn a_call_made_in_a_library_starts_at_the_services_importing_it() {
        let lib = FileFacts {
            package: Some("Shop.Components.Services".into()),
            http: vec![HttpFact::call(Some("GET"), "/api/catalog/items", 14)],
            ..FileFacts::default()
        };
        let web = FileFacts {
            package: Some("Shop.Web".into()),
            imports: vec![Import::plain("Shop.Components.Services", &[], 3)],
            ..FileFacts::default()
        };
        let api = FileFacts {
            http: vec![HttpFact::route("GET", "/api/catalog/items", None, 8)],
            ..FileFacts::default()
        };
        let mut snap = Snapshot::from_facts(vec![
            ("src/Components", "Services/CatalogService.cs", lib),
            ("src/Web", "Program.cs", web),
            ("src/Catalog", "Api.cs", api),
        ]);
        snap.roots[0].kind = crate::config::RootKind::Library;
        let (links, _) = folded_links(&snap);
        let http: Vec<(&str, &str)> = links
            .keys()
            .filter(|k| k.2 == LinkKind::Http)
            .map(|k| (k.0.as_str(), k.1.as_str()))
            .collect();
        assert_eq!(http, vec![("src/Web", "src/Catalog")]);
        // The same attribution analyze_impact and find_dependents name beside the library.
        assert_eq!(
            library_users(&snap).get(&0),
            Some(&vec!["src/Web".to_string()])
        );
        let fold = &links[&("src/Web".into(), "src/Catalog".into(), LinkKind::Http)];
        assert_eq!(
            fold.example,
            Some(("src/Components/Services/CatalogService.cs".into(), 14))
        );
    }

    /// A .NET workspace: `Api` references `Lib`, `Tool` references `Api` (so `Lib` too),
    /// `Other` references nothing; `Lib` re-opens the SDK's `Microsoft.Extensions.Hosting`.
    const DOTNET: &[(&str, &str, &str)] = &[
        (
            "src/Lib",
            "Lib.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk\" />\n",
        ),
        (
            "src/Lib",
            "Hosting.cs",
            "namespace Microsoft.Extensions.Hosting;\npublic static class LibExtensions { }\n",
        ),
        (
            "src/Lib",
            "Bus.cs",
            "namespace Acme.Bus;\npublic interface IBus { }\n",
        ),
        (
            "src/Api",
            "Api.csproj",
            "<Project>\n  <ItemGroup>\n    <ProjectReference Include=\"..\\Lib\\Lib.csproj\" />\n  </ItemGroup>\n</Project>\n",
        ),
        (
            "src/Api",
            "Program.cs",
            "using Microsoft.Extensions.Hosting;\nusing Acme.Bus;\nnamespace Acme.Api;\npublic class Program { }\n",
        ),
        (
            "src/Tool",
            "Tool.csproj",
            "<Project><ItemGroup><ProjectReference Include='../Api/Api.csproj'/></ItemGroup></Project>\n",
        ),
        (
            "src/Tool",
            "Main.cs",
            "using Acme.Bus;\nnamespace Acme.Tool;\npublic class Main { }\n",
        ),
        (
            "src/Other",
            "Other.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk.Web\" />\n",
        ),
        (
            "src/Other",
            "Program.cs",
            "using Microsoft.Extensions.Hosting;\nnamespace Acme.Other;\npublic class Program { }\n",
        ),
    ];

    fn import_edges(snap: &Snapshot) -> Vec<(String, String, String)> {
        let (links, _) = folded_links(snap);
        links
            .iter()
            .filter(|(k, _)| k.2 == LinkKind::Imports)
            .map(|(k, f)| {
                let (p, l) = f.example.clone().unwrap_or_default();
                (k.0.clone(), k.1.clone(), format!("{p}:{l}"))
            })
            .collect()
    }

    #[test]
    fn dotnet_project_references_are_edges_and_gate_namespace_imports() {
        let snap = Snapshot::of_sources(DOTNET);
        assert_eq!(
            import_edges(&snap),
            vec![
                (
                    "src/Api".into(),
                    "src/Lib".into(),
                    "src/Api/Api.csproj:3".into()
                ),
                (
                    "src/Tool".into(),
                    "src/Api".into(),
                    "src/Tool/Tool.csproj:1".into()
                ),
                // Through Api's reference: MSBuild project references are transitive.
                (
                    "src/Tool".into(),
                    "src/Lib".into(),
                    "src/Tool/Main.cs:1".into()
                ),
            ]
        );
        // `Other` gets `Microsoft.Extensions.Hosting` from its SDK, not from Lib.
        assert!(snap.graph.project_may_import(2, 0));
        assert!(!snap.graph.project_may_import(3, 0));
    }

    #[test]
    fn a_package_reference_links_only_when_it_names_a_workspace_project() {
        let snap = Snapshot::of_sources(&[
            (
                "src/Pkg",
                "Pkg.csproj",
                "<Project><PropertyGroup><AssemblyName>Acme.Pkg</AssemblyName></PropertyGroup></Project>\n",
            ),
            (
                "src/App",
                "App.csproj",
                "<Project>\n<ItemGroup>\n<PackageReference Include=\"Polly\" />\n<PackageReference Include=\"acme.pkg\" Version=\"1.0\" />\n</ItemGroup>\n</Project>\n",
            ),
        ]);
        assert_eq!(
            import_edges(&snap),
            vec![(
                "src/App".into(),
                "src/Pkg".into(),
                "src/App/App.csproj:4".into()
            )]
        );
    }

    #[test]
    fn without_project_files_a_namespace_import_still_links() {
        let sources: Vec<_> = DOTNET
            .iter()
            .copied()
            .filter(|f| !f.1.ends_with(".csproj"))
            .collect();
        let snap = Snapshot::of_sources(&sources);
        let edges = import_edges(&snap);
        assert!(
            edges.contains(&(
                "src/Other".into(),
                "src/Lib".into(),
                "src/Other/Program.cs:1".into()
            )),
            "{edges:?}"
        );
    }
}
