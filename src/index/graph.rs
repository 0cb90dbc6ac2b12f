//! Resolution of per-file facts into one cross-service graph: gRPC contracts with their
//! handlers, clients and call sites; event topics with producers and consumers; HTTP routes
//! with their callers. Every link carries a [`Confidence`] and `path:line` evidence.
//!
//! Resolution is a pure function of the snapshot's files, run once per snapshot. Generated
//! code is never a handler or caller; test files are kept (tools leave them out and count
//! them).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::facts::{EventRole, GrpcFact, HttpFact, Part, SymbolKind, Value};
use super::resolve::{HoleKind, Resolved, Resolver, Seg};
use super::snapshot::FileEntry;

mod navigation;

/// How sure a link is: a name resolved to one candidate (`exact`), a guess from names or paths
/// (`heuristic`), or a name with several homonymous candidates (`ambiguous`, one link each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    /// The name resolved to exactly one candidate.
    Exact,
    /// A guess from names, paths or configuration, with its evidence.
    Heuristic,
    /// One of several homonymous candidates (each gets its own link).
    Ambiguous,
}

impl Confidence {
    /// The label shown in answers.
    pub fn label(self) -> &'static str {
        match self {
            Confidence::Exact => "exact",
            Confidence::Heuristic => "heuristic",
            Confidence::Ambiguous => "ambiguous",
        }
    }

    /// The confidence of a name that matched `candidates` places: `one` (how sure a single
    /// match is) when exactly one, else `Ambiguous` (one link to each).
    pub(crate) fn of_candidates(candidates: usize, one: Confidence) -> Confidence {
        if candidates == 1 {
            one
        } else {
            Confidence::Ambiguous
        }
    }
}

/// A place in the index: file index (into the snapshot's files) and 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    /// Index into the snapshot's `files`.
    pub file: u32,
    /// 1-based line.
    pub line: u32,
}

/// A gRPC service contract from `.proto` files; copies of the same service (same package and
/// name) in several places are one contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Contract {
    /// `package.Service`.
    pub fqn: String,
    pub package: String,
    pub name: String,
    /// The defining copy (the one with the smallest workspace path).
    pub def: Loc,
    /// Every copy, the definition included.
    pub copies: Vec<Loc>,
    /// Indexes into [`Graph::rpcs`].
    pub rpcs: Vec<u32>,
}

/// One RPC of a contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Rpc {
    pub contract: u32,
    pub name: String,
    pub request: String,
    pub response: String,
    pub client_streaming: bool,
    pub server_streaming: bool,
    pub def: Loc,
}

/// A handler of an RPC, or a call site of one.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcLink {
    /// Index into the graph's `rpcs` (the RPC methods).
    pub rpc: u32,
    /// Where the handler is defined or the call is made.
    pub at: Loc,
    /// How sure the link is.
    pub confidence: Confidence,
    /// The handler method or the call as written (`orderServer.CreateOrder`, `client.createOrder`).
    pub label: String,
}

/// A server registration or a client construction for a whole service.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceLink {
    /// Index into the graph's `contracts` (the gRPC services).
    pub contract: u32,
    /// Where the server is registered or the client is built.
    pub at: Loc,
    /// How sure the link is.
    pub confidence: Confidence,
    /// The registration or construction as written (`pb.RegisterOrderServiceServer`).
    pub label: String,
}

/// An event topic, keyed by its normalised name.
#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    /// Lowercase name (`orders.created`).
    pub key: String,
    /// The name as first written.
    pub name: String,
}

/// A producer or consumer of a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLink {
    pub topic: u32,
    pub role: EventRole,
    pub at: Loc,
    pub via: String,
    /// How the topic name was found (`literal`, `constant Topics.ORDER_CREATED`,
    /// `env ORDERS_TOPIC default`).
    pub how: String,
    pub confidence: Confidence,
}

/// An HTTP route served.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub method: String,
    pub path: String,
    pub at: Loc,
    pub handler: Option<String>,
    /// True for routes declared in an OpenAPI document rather than in code.
    pub from_spec: bool,
    /// The API versions it serves (`1.0`, `2.0`), when the code says; empty when it is not
    /// versioned or serves every version.
    pub versions: Vec<String>,
}

impl Route {
    /// `GET /orders/{id}`, with the versions it serves when known: `GET /items (v1.0, v2.0)`.
    pub fn label(&self) -> String {
        if self.versions.is_empty() {
            format!("{} {}", self.method, self.path)
        } else {
            format!(
                "{} {} (v{})",
                self.method,
                self.path,
                self.versions.join(", v")
            )
        }
    }
}

/// A call whose path literal matches a route.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteCall {
    pub route: u32,
    pub at: Loc,
    pub method: Option<String>,
    pub path: String,
    pub confidence: Confidence,
    /// A deployment's health check of the service itself ([`HttpFact::Probe`]), or an in-app
    /// navigation ([`HttpFact::Navigate`]): a caller a change of the route breaks, but no link
    /// between two services.
    pub probe: bool,
    /// An in-app navigation link to a page of the same root ([`HttpFact::Navigate`]).
    pub navigation: bool,
}

/// An HTTP call whose route the index could not determine.
#[derive(Debug, Clone, PartialEq)]
pub struct UnresolvedCall {
    pub at: Loc,
    pub method: Option<String>,
    /// The URL as resolved, `{}` for run-time parts and `{NAME}` for unresolved names.
    pub url: String,
    pub why: String,
    /// The root the host part names, when it names one (`CATALOGUE_HOST`, `http://cart:8080`).
    pub to_root: Option<u16>,
}

/// An import that resolves into another root: `import com.acme.payments.Client` where
/// `services/payments` declares `package com.acme.payments`, or `../../orders/src/x` leaving
/// the importer's root.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportLink {
    pub at: Loc,
    pub to_root: u16,
    pub module: String,
    pub confidence: Confidence,
}

/// The resolved cross-service graph of one snapshot.
#[derive(Debug, Default)]
pub struct Graph {
    pub contracts: Vec<Contract>,
    pub rpcs: Vec<Rpc>,
    pub handlers: Vec<RpcLink>,
    pub calls: Vec<RpcLink>,
    pub servers: Vec<ServiceLink>,
    pub clients: Vec<ServiceLink>,
    pub topics: Vec<Topic>,
    pub events: Vec<EventLink>,
    /// Event sites whose topic name could not be resolved to a literal (never invented):
    /// the site, the topic as written, and why it did not resolve.
    pub unresolved_events: Vec<(Loc, String)>,
    /// HTTP calls the index could not match to a route: the site, the URL as it resolved
    /// (`{}` for run-time parts) and why (no route has that path, the URL is built at run
    /// time, the host names no service of the workspace).
    pub unresolved_calls: Vec<UnresolvedCall>,
    pub routes: Vec<Route>,
    pub route_calls: Vec<RouteCall>,
    /// Imports that land in another root (for the service picture), and .NET project
    /// references (`ProjectReference` lines of project files) into another root.
    pub import_links: Vec<ImportLink>,
    /// For each root holding a .NET project file: the other roots its projects reference,
    /// directly or through other projects (MSBuild project references are transitive). See
    /// [`Graph::project_may_import`].
    pub project_refs: BTreeMap<u16, BTreeSet<u16>>,
    /// Roots whose .NET project hosts Blazor components in a native web view (a
    /// `Microsoft.AspNetCore.Components.WebView.*` package: .NET MAUI, WPF, Windows Forms
    /// Blazor Hybrid). Their `@page` routes and links are navigation inside the app, routed
    /// by the web view, not HTTP routes anything can call.
    pub hybrid_roots: BTreeSet<u16>,
    /// Contracts by [`service_key`] of their name and by lowercase fqn, so
    /// [`Graph::contracts_named`] is a lookup rather than a scan computing every contract's key
    /// (it runs for every gRPC client and server site: quadratic on a contract-heavy
    /// workspace). Covers the first `indexed` contracts.
    by_key: HashMap<String, Vec<u32>>,
    by_fqn: HashMap<String, Vec<u32>>,
    indexed: usize,
}

/// The roots whose .NET project references a Blazor web view package ([`Graph::hybrid_roots`]):
/// the snapshot's name tables and the graph both need them, so the snapshot asks once.
pub fn blazor_hybrid_roots(files: &[Arc<FileEntry>]) -> BTreeSet<u16> {
    files
        .iter()
        .filter(|f| f.lang == super::facts::Language::MsBuild)
        .filter(|f| {
            f.facts()
                .imports
                .iter()
                .any(|i| is_blazor_web_view(&i.module))
        })
        .map(|f| f.root)
        .collect()
}

/// Whether a package reference hosts Blazor components in a native app's web view
/// (`Microsoft.AspNetCore.Components.WebView.Maui`, `.Wpf`, `.WindowsForms`).
fn is_blazor_web_view(package: &str) -> bool {
    const WEB_VIEW: &str = "microsoft.aspnetcore.components.webview";
    package
        .get(..WEB_VIEW.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(WEB_VIEW))
        && matches!(package.as_bytes().get(WEB_VIEW.len()), None | Some(b'.'))
}

/// `CreateOrder`, `createOrder` and `create_order` all normalise to `createorder`.
pub fn method_key(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A topic key: lowercase, as written.
pub fn topic_key(name: &str) -> String {
    name.trim().to_lowercase()
}

impl Graph {
    /// Resolves the facts of `files` (sorted as in the snapshot; `display` gives each file's
    /// workspace path, used for deterministic tie-breaks).
    ///
    /// Two independent halves run on two threads: the gRPC contracts, their links and the
    /// cross-root imports on one; the path resolver, the topics and the HTTP routes on the
    /// other. They write disjoint fields, so the result is the same whichever ends first
    /// (each half is itself sequential, in file order). `hybrid_roots` is
    /// [`blazor_hybrid_roots`] of `files`, which the snapshot's name tables need too.
    pub fn build(
        files: &[Arc<FileEntry>],
        display: &(dyn Fn(&FileEntry) -> String + Sync),
        hybrid_roots: &BTreeSet<u16>,
    ) -> Graph {
        // .NET project references first (project files only, so cheap): both halves read them.
        let mut projects = Graph {
            hybrid_roots: hybrid_roots.clone(),
            ..Graph::default()
        };
        projects.project_links(files, display);
        let contracts_half = || {
            let mut g = Graph {
                project_refs: projects.project_refs.clone(),
                ..Graph::default()
            };
            g.contracts_from_protos(files, display);
            g.grpc_links(files);
            g.import_links(files);
            g
        };
        let (mut g, links) = std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new().spawn_scoped(scope, contracts_half);
            let links = Graph::resolved_links(files, display, &projects);
            let g = match spawned {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(_) => contracts_half(),
            };
            (g, links)
        });
        g.topics = links.topics;
        g.events = links.events;
        g.unresolved_events = links.unresolved_events;
        g.routes = links.routes;
        g.route_calls = links.route_calls;
        g.unresolved_calls = links.unresolved_calls;
        g.import_links.splice(0..0, projects.import_links);
        g.hybrid_roots = projects.hybrid_roots;
        g
    }

    /// The half of [`Graph::build`] that needs the resolver: topics, events and HTTP links
    /// (returned in a graph of their own; the other fields stay empty).
    /// `projects` holds the .NET project references ([`Graph::project_links`]).
    fn resolved_links(
        files: &[Arc<FileEntry>],
        display: &dyn Fn(&FileEntry) -> String,
        projects: &Graph,
    ) -> Graph {
        let mut g = Graph {
            project_refs: projects.project_refs.clone(),
            hybrid_roots: projects.hybrid_roots.clone(),
            ..Graph::default()
        };
        let paths: Vec<String> = files.iter().map(|f| display(f)).collect();
        let roots = root_labels(files, &paths);
        let resolver = Resolver::new(files, paths);
        g.topic_links(files, &resolver);
        super::handlers::relocate_to_handlers(&mut g.events, files, display);
        g.http_links(files, &resolver, &roots);
        g
    }

    /// Resolves imports across roots: a dotted import whose longest declared package prefix
    /// lives only in other roots (JVM, C#, Scala, PHP namespaces), or a relative path that
    /// leaves the importer's root and lands in another (`../../orders/src/client`). Imports
    /// that resolve inside their own root are not cross-service links.
    fn import_links(&mut self, files: &[Arc<FileEntry>]) {
        use super::facts::Language as L;
        let dotted = |l: L| matches!(l, L::Java | L::Kotlin | L::Scala | L::CSharp | L::Php);
        let mut packages: HashMap<String, Vec<u16>> = HashMap::new();
        // Generated code (gRPC stubs, client SDKs) declares a contract's package in every root
        // that compiles the contract: importing it is using the contract, not another service.
        for f in files.iter().filter(|f| dotted(f.lang) && !f.generated) {
            if let Some(p) = &f.facts().package {
                let roots = packages.entry(p.replace('\\', ".")).or_default();
                if !roots.contains(&f.root) {
                    roots.push(f.root);
                }
            }
        }
        for (fi, f) in files.iter().enumerate() {
            for imp in &f.facts().imports {
                let at = Loc {
                    file: fi as u32,
                    line: imp.line,
                };
                if dotted(f.lang) {
                    let module = imp.module.replace('\\', ".");
                    let mut prefix = module.as_str();
                    let found = loop {
                        if let Some(r) = packages.get(prefix) {
                            break Some(r);
                        }
                        match prefix.rsplit_once('.') {
                            Some((head, _)) => prefix = head,
                            None => break None,
                        }
                    };
                    if let Some(roots) = found
                        && !roots.contains(&f.root)
                    {
                        // C#: a namespace declared in another project links to it only when
                        // the importer's project references that project (the name may come
                        // from the SDK: a library re-opening `Microsoft.Extensions.Hosting`).
                        let roots: Vec<u16> = roots
                            .iter()
                            .copied()
                            .filter(|&r| f.lang != L::CSharp || self.project_may_import(f.root, r))
                            .collect();
                        let confidence = Confidence::of_candidates(roots.len(), Confidence::Exact);
                        for r in roots {
                            self.import_links.push(ImportLink {
                                at,
                                to_root: r,
                                module: imp.module.clone(),
                                confidence,
                            });
                        }
                    }
                }
            }
        }
    }

    /// Whether a C# file of root `from` can see a namespace declared in root `to`: the same
    /// root, or `from`'s .NET projects reference one of `to`'s (transitively). A root without
    /// a project file (loose scripts, a workspace without any) proves nothing either way, so
    /// it keeps the namespace rule alone. No list of framework names is needed: a workspace
    /// library that declares `namespace Microsoft.Extensions.Hosting` links only the projects
    /// that reference it, and every other `using Microsoft.Extensions.Hosting` is the SDK's.
    pub fn project_may_import(&self, from: u16, to: u16) -> bool {
        if from == to {
            return true;
        }
        match self.project_refs.get(&from) {
            Some(refs) if self.project_refs.contains_key(&to) => refs.contains(&to),
            _ => true,
        }
    }

    /// .NET project references: each `ProjectReference` of a project file that resolves to a
    /// project file of the workspace (by its path, relative to the referencing file, compared
    /// without case as Windows builds do), and each `PackageReference` naming exactly one
    /// workspace project by assembly name, becomes an import link when it crosses roots; the
    /// transitive closure per root goes to [`Graph::project_refs`].
    fn project_links(&mut self, files: &[Arc<FileEntry>], display: &dyn Fn(&FileEntry) -> String) {
        use super::facts::Language as L;
        use super::lang::msbuild::{is_project_path, referenced_path};
        let projects: Vec<(usize, String)> = files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.lang == L::MsBuild)
            .map(|(i, f)| (i, display(f)))
            .collect();
        if projects.is_empty() {
            return;
        }
        let by_path: HashMap<String, usize> = projects
            .iter()
            .map(|(i, p)| (p.to_lowercase(), *i))
            .collect();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, _) in &projects {
            if let Some(name) = &files[*i].facts().package {
                by_name.entry(name.to_lowercase()).or_default().push(*i);
            }
        }
        let mut direct: BTreeMap<u16, BTreeSet<u16>> = BTreeMap::new();
        for (pi, path) in &projects {
            let f = &files[*pi];
            direct.entry(f.root).or_default();
            for imp in &f.facts().imports {
                let targets: Vec<usize> = if is_project_path(&imp.module) {
                    referenced_path(path, &imp.module)
                        .and_then(|p| by_path.get(&p).copied())
                        .into_iter()
                        .collect()
                } else {
                    by_name
                        .get(&imp.module.to_lowercase())
                        .cloned()
                        .unwrap_or_default()
                };
                let targets: Vec<usize> = targets.into_iter().filter(|t| t != pi).collect();
                let confidence = Confidence::of_candidates(targets.len(), Confidence::Exact);
                for t in targets {
                    let to_root = files[t].root;
                    if to_root == f.root {
                        continue;
                    }
                    direct.entry(f.root).or_default().insert(to_root);
                    self.import_links.push(ImportLink {
                        at: Loc {
                            file: *pi as u32,
                            line: imp.line,
                        },
                        to_root,
                        module: imp.module.clone(),
                        confidence,
                    });
                }
            }
        }
        for &root in direct.keys() {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<u16> = direct[&root].iter().copied().collect();
            while let Some(r) = todo.pop() {
                if r != root && seen.insert(r) {
                    todo.extend(direct.get(&r).into_iter().flatten().copied());
                }
            }
            self.project_refs.insert(root, seen);
        }
    }

    fn contracts_from_protos(
        &mut self,
        files: &[Arc<FileEntry>],
        display: &dyn Fn(&FileEntry) -> String,
    ) {
        // fqn → (display path, loc, file index, service index) for each copy.
        let mut copies: BTreeMap<String, Vec<(String, Loc, usize, usize)>> = BTreeMap::new();
        for (fi, f) in files.iter().enumerate() {
            let Some(proto) = f.facts().proto.as_ref() else {
                continue;
            };
            let package = proto.package.clone().unwrap_or_default();
            for (si, svc) in proto.services.iter().enumerate() {
                let fqn = if package.is_empty() {
                    svc.name.clone()
                } else {
                    format!("{package}.{}", svc.name)
                };
                copies.entry(fqn).or_default().push((
                    display(f),
                    Loc {
                        file: fi as u32,
                        line: svc.line,
                    },
                    fi,
                    si,
                ));
            }
        }
        for (fqn, mut list) in copies {
            crate::order::sort_by(&mut list, |a, b| a.0.cmp(&b.0));
            let (_, def, fi, si) = list[0].clone();
            let proto = files[fi].facts().proto.as_ref().expect("proto file");
            let svc = &proto.services[si];
            let ci = self.contracts.len() as u32;
            let mut rpcs = Vec::new();
            for rpc in &svc.rpcs {
                rpcs.push(self.rpcs.len() as u32);
                self.rpcs.push(Rpc {
                    contract: ci,
                    name: rpc.name.clone(),
                    request: rpc.request.clone(),
                    response: rpc.response.clone(),
                    client_streaming: rpc.client_streaming,
                    server_streaming: rpc.server_streaming,
                    def: Loc {
                        file: fi as u32,
                        line: rpc.line,
                    },
                });
            }
            self.contracts.push(Contract {
                fqn,
                package: proto.package.clone().unwrap_or_default(),
                name: svc.name.clone(),
                def,
                copies: list.iter().map(|c| c.1).collect(),
                rpcs,
            });
        }
        for (ci, c) in self.contracts.iter().enumerate() {
            let ci = ci as u32;
            self.by_key
                .entry(service_key(&c.name))
                .or_default()
                .push(ci);
            self.by_fqn
                .entry(c.fqn.to_lowercase())
                .or_default()
                .push(ci);
        }
        self.indexed = self.contracts.len();
    }

    /// Contracts whose service name matches (case-insensitive; a `Service`/`Grpc` suffix on one
    /// side is tolerated).
    pub fn contracts_named(&self, service: &str) -> Vec<u32> {
        let want = service_key(service);
        if self.indexed == self.contracts.len() {
            if let Some(exact) = self.by_key.get(&want) {
                return exact.clone();
            }
            return self
                .by_fqn
                .get(&service.to_lowercase())
                .cloned()
                .unwrap_or_default();
        }
        let exact: Vec<u32> = (0..self.contracts.len() as u32)
            .filter(|&c| service_key(&self.contracts[c as usize].name) == want)
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        let want_dotted = service.to_lowercase();
        (0..self.contracts.len() as u32)
            .filter(|&c| self.contracts[c as usize].fqn.to_lowercase() == want_dotted)
            .collect()
    }

    fn rpc_in(&self, contract: u32, method: &str) -> Option<u32> {
        let key = method_key(method);
        self.contracts[contract as usize]
            .rpcs
            .iter()
            .copied()
            .find(|&r| method_key(&self.rpcs[r as usize].name) == key)
    }

    fn grpc_links(&mut self, files: &[Arc<FileEntry>]) {
        // Methods by directory (a Go server's methods may live in another file of its package).
        let mut by_dir: HashMap<(u16, &str), Vec<usize>> = HashMap::new();
        for (fi, f) in files.iter().enumerate() {
            by_dir.entry(dir_of(f)).or_default().push(fi);
        }
        let impl_services = impl_services(files);
        // The clients each package stores by name, read once per package: every exported
        // method called on a field (`s.log.Info(…)`) is such a call, and reading the package
        // per call was quadratic (a 200-file package of 60 000 calls: 15 s).
        let mut package_clients: HashMap<(u16, &str), HashMap<&str, Vec<&str>>> = HashMap::new();
        for (fi, f) in files.iter().enumerate() {
            if f.generated {
                continue;
            }
            for fact in &f.facts().grpc {
                match fact {
                    GrpcFact::Server {
                        service,
                        impl_type,
                        line,
                    } if service.is_empty() => {
                        let Some(t) = impl_type else { continue };
                        for svc in impl_services.get(t.as_str()).into_iter().flatten() {
                            let candidates = self.contracts_named(svc);
                            let conf =
                                Confidence::of_candidates(candidates.len(), Confidence::Exact);
                            for c in candidates {
                                self.servers.push(ServiceLink {
                                    contract: c,
                                    at: Loc {
                                        file: fi as u32,
                                        line: *line,
                                    },
                                    confidence: conf,
                                    label: t.clone(),
                                });
                            }
                        }
                    }
                    GrpcFact::Server {
                        service,
                        impl_type,
                        line,
                    } => self.server_links(files, &by_dir, fi, service, impl_type, *line),
                    GrpcFact::Handler {
                        service,
                        method,
                        line,
                    } => {
                        let candidates = self.contracts_named(service);
                        let conf = Confidence::of_candidates(candidates.len(), Confidence::Exact);
                        for c in candidates {
                            if let Some(r) = self.rpc_in(c, method) {
                                self.handlers.push(RpcLink {
                                    rpc: r,
                                    at: Loc {
                                        file: fi as u32,
                                        line: *line,
                                    },
                                    confidence: conf,
                                    label: format!("{service}.{method}"),
                                });
                            }
                        }
                    }
                    GrpcFact::Client { service, var, line } => {
                        let candidates = self.contracts_named(service);
                        let conf = Confidence::of_candidates(candidates.len(), Confidence::Exact);
                        for c in candidates {
                            self.clients.push(ServiceLink {
                                contract: c,
                                at: Loc {
                                    file: fi as u32,
                                    line: *line,
                                },
                                confidence: conf,
                                label: var.clone().unwrap_or_else(|| format!("{service} client")),
                            });
                        }
                    }
                    GrpcFact::Call {
                        service: Some(service),
                        receiver,
                        method,
                        line,
                    } => {
                        let at = Loc {
                            file: fi as u32,
                            line: *line,
                        };
                        self.call_links(at, service, receiver, method);
                    }
                    GrpcFact::Call {
                        service: None,
                        receiver,
                        method,
                        line,
                    } => {
                        // A call on a field the file does not type (`fe.adSvc.GetAds(…)`, the
                        // struct declared in another file of the package): the field holds a
                        // client when the package stores one under that name.
                        let clients = package_clients.entry(dir_of(f)).or_insert_with(|| {
                            let package = by_dir.get(&dir_of(f)).map_or(&[][..], Vec::as_slice);
                            field_clients(files, package)
                        });
                        let at = Loc {
                            file: fi as u32,
                            line: *line,
                        };
                        for service in clients.get(receiver.as_str()).into_iter().flatten() {
                            self.call_links(at, service, receiver, method);
                        }
                    }
                }
            }
        }
        dedup_links(&mut self.handlers);
        dedup_links(&mut self.calls);
    }

    /// A server of `service` registered at `line` of file `fi`: one link per contract of that
    /// name, and the handlers of its RPCs among the methods of the implementing type (the
    /// same file first, then the files of the same directory, `by_dir`).
    fn server_links(
        &mut self,
        files: &[Arc<FileEntry>],
        by_dir: &HashMap<(u16, &str), Vec<usize>>,
        fi: usize,
        service: &str,
        impl_type: &Option<String>,
        line: u32,
    ) {
        let f = &files[fi];
        let candidates = self.contracts_named(service);
        let conf = Confidence::of_candidates(candidates.len(), Confidence::Exact);
        for c in candidates {
            self.servers.push(ServiceLink {
                contract: c,
                at: Loc {
                    file: fi as u32,
                    line,
                },
                confidence: conf,
                label: impl_type.clone().unwrap_or_else(|| service.to_string()),
            });
            // Handlers: methods of the implementing type (same file first,
            // then the files of the same directory).
            let mut dir_files = vec![fi];
            if let Some(others) = by_dir.get(&dir_of(f)) {
                dir_files.extend(
                    others
                        .iter()
                        .copied()
                        .filter(|&o| o != fi && !files[o].generated),
                );
            }
            // A registration that maps its handlers itself (`addService(svc,
            // { convert, charge: h })`) has them as Handler facts: looking
            // for functions named like the RPCs would list each one twice.
            let mapped = impl_type.is_none()
                && f.facts()
                    .grpc
                    .iter()
                    .any(|g| matches!(g, GrpcFact::Handler { service: s, .. } if s == service));
            if !mapped {
                self.server_handlers(files, c, &dir_files, impl_type.as_deref(), conf);
            }
        }
    }

    /// The handlers of contract `c` registered by a server in `dir_files[0]`: for each RPC,
    /// the first method of the implementing type (any function of the registering file when
    /// the type is not named) in `dir_files`, in order, whose name has the RPC's key.
    fn server_handlers(
        &mut self,
        files: &[Arc<FileEntry>],
        c: u32,
        dir_files: &[usize],
        impl_type: Option<&str>,
        conf: Confidence,
    ) {
        let fi = dir_files[0];
        let rpcs = self.contracts[c as usize].rpcs.clone();
        for r in rpcs {
            let key = method_key(&self.rpcs[r as usize].name);
            let found = dir_files.iter().find_map(|&di| {
                let df = &files[di];
                df.symbols().iter().find_map(|s| {
                    let is_method = matches!(s.kind, SymbolKind::Method | SymbolKind::Function);
                    let container_ok = match impl_type {
                        Some(t) => df.container(s) == Some(t),
                        None => di == fi,
                    };
                    (is_method && container_ok && method_key(df.name(s)) == key).then(|| {
                        (
                            di,
                            s.line,
                            format!("{}.{}", df.container(s).unwrap_or(""), df.name(s)),
                        )
                    })
                })
            });
            if let Some((di, line, label)) = found {
                self.handlers.push(RpcLink {
                    rpc: r,
                    at: Loc {
                        file: di as u32,
                        line,
                    },
                    confidence: conf,
                    label: label.trim_start_matches('.').to_string(),
                });
            }
        }
    }

    /// The RPCs one call site on a client of `service` may reach: the service's RPC of that
    /// method (in every contract of that name).
    fn call_links(&mut self, at: Loc, service: &str, receiver: &str, method: &str) {
        let label = format!("{receiver}.{method}");
        let hits: Vec<u32> = self
            .contracts_named(service)
            .iter()
            .filter_map(|&c| self.rpc_in(c, method))
            .collect();
        let conf = Confidence::of_candidates(hits.len(), Confidence::Exact);
        for r in hits {
            self.calls.push(RpcLink {
                rpc: r,
                at,
                confidence: conf,
                label: label.clone(),
            });
        }
    }

    fn topic_links(&mut self, files: &[Arc<FileEntry>], resolver: &Resolver) {
        let mut topic_index: HashMap<String, u32> = HashMap::new();
        for (fi, f) in files.iter().enumerate() {
            if f.generated {
                continue;
            }
            for ev in &f.facts().events {
                let at = Loc {
                    file: fi as u32,
                    line: ev.line,
                };
                let resolved = resolver.resolve(fi as u32, &ev.topic);
                // A `Consumer`/`Supplier`/`Function` bean is a Spring Cloud Stream binding only
                // when its destination is configured or its service configures the framework.
                if ev.via == crate::index::lang::jvm::STREAM_BEAN_VIA
                    && resolved.chain.is_empty()
                    && !resolver.root_configures(fi as u32, "spring.cloud.stream")
                    && !resolver.root_configures(fi as u32, "spring.cloud.function")
                {
                    continue;
                }
                let exchange = ev.via == crate::index::lang::common::AMQP_EXCHANGE_VIA;
                let Some(name) = resolved.text().filter(|t| !t.trim().is_empty()) else {
                    // An AMQP exchange that is the default one (a constant `""`), or that is
                    // unknown where the call's routing key or queue is listed already, is
                    // no site of its own.
                    if exchange
                        && (resolved.text().is_some()
                            || f.facts()
                                .events
                                .iter()
                                .any(|o| o.line == ev.line && o.via != ev.via))
                    {
                        continue;
                    }
                    // A topic known only at run time: the site's library (or its own
                    // explanation) says more.
                    let text = if ev.topic.is_dynamic() {
                        format!("topic built at run time ({})", ev.via)
                    } else {
                        let why = resolved
                            .why_unresolved()
                            .unwrap_or_else(|| "the name is empty".into());
                        format!("{} ({why})", ev.topic.display())
                    };
                    self.unresolved_events.push((at, text));
                    continue;
                };
                // An SQS queue URL or an SNS ARN (resolved through a constant or an env
                // default) names its queue or topic, as consumers that name it do.
                let name = match crate::index::lang::common::aws_destination_name(&name) {
                    short if short.len() != name.len() => short.to_string(),
                    _ => name,
                };
                let key = topic_key(&name);
                let next = self.topics.len() as u32;
                let topic = *topic_index.entry(key.clone()).or_insert_with(|| next);
                if topic == next {
                    self.topics.push(Topic { key, name });
                }
                self.events.push(EventLink {
                    topic,
                    role: ev.role,
                    at,
                    via: ev.via.clone(),
                    how: resolved.how.clone(),
                    confidence: resolved.confidence,
                });
            }
        }
    }

    fn http_links(&mut self, files: &[Arc<FileEntry>], resolver: &Resolver, roots: &[String]) {
        // Routes of a router mounted from another file are served under that file's prefixes.
        let mounted = super::mounts::route_prefixes(files, resolver);
        let app_prefixes = super::mounts::AppPrefixes::new(files, resolver);
        for (fi, f) in files.iter().enumerate() {
            // A Blazor Hybrid app's pages are routed inside the app, not served over HTTP.
            if self.hybrid_roots.contains(&f.root) && super::facts::is_razor(&f.path) {
                continue;
            }
            let from_spec = matches!(f.lang, super::facts::Language::Yaml);
            let prefixes = mounted.get(&(fi as u32));
            let versions_at = |at: u32| {
                f.facts()
                    .http
                    .iter()
                    .find_map(|h| match h {
                        HttpFact::Versions { versions, line } if *line == at => {
                            Some(versions.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or_default()
            };
            let named_prefixes = named_route_prefixes(resolver, fi as u32, &f.facts().http);
            for h in &f.facts().http {
                if let HttpFact::Route {
                    method,
                    path,
                    handler,
                    line,
                } = h
                {
                    // Innermost first: the prefixes of nested classes, then the outer one's.
                    let path = &named_prefixes
                        .iter()
                        .rev()
                        .filter(|(first, last, _)| (*first..=*last).contains(line))
                        .fold(path.clone(), |p, (_, _, prefix)| {
                            super::mounts::join_route_path(prefix, &p)
                        });
                    let mut paths: Vec<String> = match prefixes {
                        Some(ps) if !ps.is_empty() => ps
                            .iter()
                            .map(|p| super::mounts::join_route_path(p, path))
                            .collect(),
                        _ => vec![path.clone()],
                    };
                    if let Some(app) = app_prefixes.of(f).filter(|_| !from_spec) {
                        for p in &mut paths {
                            *p = super::mounts::join_route_path(app, p);
                        }
                    }
                    for path in paths {
                        self.routes.push(Route {
                            method: method.to_uppercase(),
                            path,
                            at: Loc {
                                file: fi as u32,
                                line: *line,
                            },
                            handler: handler.clone(),
                            from_spec,
                            versions: versions_at(*line),
                        });
                    }
                }
            }
        }
        let join = HttpJoin {
            files,
            resolver,
            templates: self
                .routes
                .iter()
                .map(|r| route_segments(&r.path))
                .collect(),
            service_names: roots.iter().map(|r| service_name(r)).collect(),
            client_methods: generated_client_methods(files),
            call_args: call_args(files),
        };
        for (fi, f) in files.iter().enumerate() {
            for h in &f.facts().http {
                match h {
                    HttpFact::Call { method, url, line } => {
                        self.http_call(&join, fi, method, url, *line)
                    }
                    HttpFact::Probe {
                        service,
                        path,
                        shown,
                        line,
                    } => self.health_probe(&join, roots, fi, service, path, shown, *line),
                    // Inside a Blazor Hybrid app a link is navigation of its web view.
                    HttpFact::Navigate { url, line } if !self.hybrid_roots.contains(&f.root) => {
                        self.navigation(&join, fi, url, *line)
                    }
                    _ => {}
                }
            }
        }
    }

    /// Joins a deployment's health check to the route of its own service that serves the
    /// path. The service is the one the check names, else the root the deployment file is
    /// in; a check no route in code serves (a framework's `/actuator/health`) links nothing.
    #[allow(clippy::too_many_arguments)]
    fn health_probe(
        &mut self,
        join: &HttpJoin,
        roots: &[String],
        fi: usize,
        service: &str,
        path: &str,
        shown: &str,
        line: u32,
    ) {
        let own = join.files[fi].root;
        let root = root_named(service, &join.service_names).or_else(|| {
            roots
                .get(own as usize)
                .is_some_and(|l| l != ".")
                .then_some(own)
        });
        let Some(root) = root else { return };
        let segs: Vec<Option<String>> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| Some(s.to_string()))
            .collect();
        let matches = self.best_routes(
            join.files,
            fi as u32,
            Some("GET"),
            Some(&[root]),
            Declared::InCode,
            |r| segments_match(&segs, &join.templates[r]),
        );
        self.push_own_service_calls(matches, fi, line, shown, false);
    }

    /// The `GET` calls a service makes of its own routes (a health check, a page's link):
    /// callers of `matches`, never service edges (`probe`), heuristic unless several match.
    pub(super) fn push_own_service_calls(
        &mut self,
        matches: Vec<u32>,
        fi: usize,
        line: u32,
        shown: &str,
        navigation: bool,
    ) {
        let confidence = Confidence::of_candidates(matches.len(), Confidence::Heuristic);
        for r in matches {
            self.route_calls.push(RouteCall {
                route: r,
                at: Loc {
                    file: fi as u32,
                    line,
                },
                method: Some("GET".into()),
                path: shown.to_string(),
                confidence,
                probe: true,
                navigation,
            });
        }
    }

    /// Joins one HTTP call of file `fi` to the routes it may reach, or lists it as unresolved
    /// with the reason.
    fn http_call(
        &mut self,
        join: &HttpJoin,
        fi: usize,
        method: &Option<String>,
        url: &Value,
        line: u32,
    ) {
        let (files, resolver) = (join.files, join.resolver);
        let f = &files[fi];
        let at = Loc {
            file: fi as u32,
            line,
        };
        // A method call that may be a generated client's request: the request when
        // one generated method of that name makes exactly one, else not a request.
        let (method, resolved) = match url.parts.as_slice() {
            [Part::Ref { name, .. }] if name.ends_with("()") => {
                match join.client_methods.get(name).map(Vec::as_slice) {
                    Some([(gf, HttpFact::Call { method, url, .. })]) => {
                        (method, resolver.resolve(*gf, url))
                    }
                    _ => return,
                }
            }
            _ => {
                // A helper's request whose URL is its parameter: a request of each call site.
                if !f.generated && self.helper_call_sites(join, fi, method, url) {
                    return;
                }
                (method, resolver.resolve(fi as u32, url))
            }
        };
        self.resolved_http_call(join, at, method, &resolved);
    }

    /// An HTTP call inside a helper whose URL is (built from) one of the helper's parameters
    /// (`function get(url) { return request.get(url) }`): one call at each call site of the
    /// helper that passes a URL ([`crate::index::lang::bind::call_arg_name`] bindings), in a
    /// file related to the helper's (the same file, package or root scope, or one that imports
    /// it). A site that is itself a request already (a recognised client method) is left to
    /// that fact. False when no site was found: the call stays where it is, unresolved.
    fn helper_call_sites(
        &mut self,
        join: &HttpJoin,
        fi: usize,
        method: &Option<String>,
        url: &Value,
    ) -> bool {
        let (files, resolver) = (join.files, join.resolver);
        // The first parameter some call passes (a helper's base URL may be a constructor's
        // argument instead, `self.base + path`).
        let Some((arg, sites)) = url.parts.iter().find_map(|p| match p {
            Part::Ref { name, .. } if name.starts_with("call ") => join
                .call_args
                .get(name.as_str())
                .map(|sites| (name.as_str(), sites)),
            _ => None,
        }) else {
            return false;
        };
        let mut found = false;
        // The bound counts the sites listed, not the sites read: the first sites in file
        // order may be calls of another helper of the same name.
        let mut listed = 0;
        for &(sf, bi) in sites.iter().take(MAX_HELPER_SITES_READ) {
            if listed == MAX_HELPER_SITES {
                break;
            }
            let site_file = &files[sf as usize];
            let b = &site_file.facts().call_args[bi as usize];
            let direct = site_file
                .facts()
                .http
                .iter()
                .any(|h| matches!(h, HttpFact::Call { line, .. } if *line == b.line));
            if direct || !join.related(sf, fi as u32) {
                continue;
            }
            let mut resolved = Resolved::exact(Vec::new());
            for p in &url.parts {
                let part = match p {
                    Part::Ref { name, .. } if name == arg => resolver.resolve(sf, &b.value),
                    _ => resolver.resolve(
                        fi as u32,
                        &Value {
                            parts: vec![p.clone()],
                        },
                    ),
                };
                resolved.segs.extend(part.segs);
                resolved.chain.extend(part.chain);
                resolved.confidence = resolved.confidence.max(part.confidence);
            }
            let at = Loc {
                file: sf,
                line: b.line,
            };
            self.resolved_http_call(join, at, method, &resolved);
            listed += 1;
            found = true;
        }
        found
    }

    /// Joins one HTTP call at `at`, its URL resolved, to the routes it may reach, or lists it
    /// as unresolved with why.
    fn resolved_http_call(
        &mut self,
        join: &HttpJoin,
        at: Loc,
        method: &Option<String>,
        resolved: &Resolved,
    ) {
        let files = join.files;
        let f = &files[at.file as usize];
        let line = at.line;
        let shape = url_shape(resolved);
        let to_root = shape
            .host_hints
            .iter()
            .find_map(|h| root_named(h, &join.service_names));
        let shown = shape.display.clone();
        let Some(segs) = shape
            .path
            .as_ref()
            .filter(|p| p.iter().any(Option::is_some))
        else {
            if f.generated {
                return;
            }
            self.unresolved_calls.push(UnresolvedCall {
                at,
                method: method.clone(),
                url: shown,
                why: why_no_path(resolved, shape.path.is_some()),
                to_root,
            });
            return;
        };
        let matches = self.call_routes(join, at.file, method.as_deref(), segs, to_root, &shown);
        if matches.is_empty() && f.generated {
            return;
        }
        // A generated client (OpenAPI Generator) requests the route for whoever calls
        // its method: listed with the method, whose callers are the real call sites.
        if f.generated {
            let method_name = f
                .symbols()
                .iter()
                .filter(|s| s.line <= line && line <= s.end_line)
                .max_by_key(|s| s.line)
                .map_or("?", |s| f.name(s));
            self.unresolved_calls.push(UnresolvedCall {
                at,
                method: method.clone(),
                url: shown,
                why: format!(
                    "made inside generated client method `{method_name}`: the real call sites are the calls of that method"
                ),
                to_root: Some(files[self.routes[matches[0] as usize].at.file as usize].root),
            });
            return;
        }
        if matches.is_empty() {
            self.unresolved_calls.push(UnresolvedCall {
                at,
                method: method.clone(),
                url: shown,
                why: match to_root {
                    Some(_) => "no route of the service its host names has this path".into(),
                    None => "no route in the workspace has this path".into(),
                },
                to_root,
            });
            return;
        }
        let conf = Confidence::of_candidates(matches.len(), Confidence::Heuristic);
        for r in matches {
            self.route_calls.push(RouteCall {
                route: r,
                at,
                method: method.clone(),
                path: shown.clone(),
                confidence: conf,
                probe: false,
                navigation: false,
            });
        }
    }

    /// The routes an HTTP call of file `caller` with path `segs` may reach. Candidates: routes
    /// in code (not specs), not in the calling file, whose method fits and whose template the
    /// path can address; the best number of literal segments wins, and a host that names a
    /// service (`to_root`) narrows to it. `shown` is the URL as displayed (its
    /// `?api-version=` selects among versioned routes).
    fn call_routes(
        &self,
        join: &HttpJoin,
        caller: u32,
        method: Option<&str>,
        segs: &[Option<String>],
        to_root: Option<u16>,
        shown: &str,
    ) -> Vec<u32> {
        let files = join.files;
        let mut matches = self.best_routes(files, caller, method, None, Declared::InCode, |r| {
            segments_match(segs, &join.templates[r])
        });
        if matches.is_empty() {
            matches = self.gateway_routes(join, caller, method, segs);
        }
        if matches.is_empty() {
            // No code serves the path, but an API contract (OpenAPI) declares it: the service
            // is implemented elsewhere (another repository), and the call reaches it.
            matches = self.best_routes(files, caller, method, None, Declared::InSpec, |r| {
                segments_match(segs, &join.templates[r])
            });
        }
        self.narrow_routes(files, &mut matches, files[caller as usize].root, to_root);
        // `?api-version=2.0` selects the routes serving that version, when the code says
        // which do (one path may be served by a handler per version).
        if let Some(asked) = api_version_asked(shown) {
            let serves = |r: &u32| {
                let versions = &self.routes[*r as usize].versions;
                versions.is_empty() || versions.contains(&asked)
            };
            if matches.iter().any(serves) {
                matches.retain(serves);
            }
        }
        matches
    }

    /// Through a gateway: `/api/cart/add/…` reaches cart's `/add/…` when a leading
    /// segment names the service (nginx `location /api/cart/`, ingress and BFF
    /// prefixes). Only when nothing matched directly; the first prefix that finds routes wins.
    fn gateway_routes(
        &self,
        join: &HttpJoin,
        caller: u32,
        method: Option<&str>,
        segs: &[Option<String>],
    ) -> Vec<u32> {
        for cut in 1..=segs.len().saturating_sub(1).min(3) {
            let named = segs[..cut]
                .iter()
                .flatten()
                .find_map(|seg| root_named(seg, &join.service_names));
            let Some(root) = named else { continue };
            let rest = &segs[cut..];
            // The rest may be only run-time segments (`/api/cart/{id}` → `/{id}`)
            // because the prefix already named the service.
            let found = self.best_routes(
                join.files,
                caller,
                method,
                Some(&[root]),
                Declared::InCode,
                |r| segments_match_named(rest, &join.templates[r]),
            );
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// Narrows the routes a call of root `caller_root` matched: to other roots' when some fit
    /// (an HTTP call is usually another service's), then to the root its host names, when
    /// that leaves any.
    fn narrow_routes(
        &self,
        files: &[Arc<FileEntry>],
        matches: &mut Vec<u32>,
        caller_root: u16,
        to_root: Option<u16>,
    ) {
        let root_of = |r: u32| files[self.routes[r as usize].at.file as usize].root;
        // An HTTP call is usually another service's: when routes of other roots fit
        // as well as the caller's own, the caller's own are dropped.
        if matches.iter().any(|&r| root_of(r) != caller_root) {
            matches.retain(|&r| root_of(r) != caller_root);
        }
        if let Some(root) = to_root {
            let narrowed: Vec<u32> = matches
                .iter()
                .copied()
                .filter(|&r| root_of(r) == root)
                .collect();
            if !narrowed.is_empty() {
                *matches = narrowed;
            }
        }
    }

    /// The routes an HTTP call made in `caller` may reach, best `score` first and only those:
    /// routes declared where `declared` says (code, or only API contracts), outside the
    /// calling file, in test code only for a test caller, whose method fits (`ANY` fits
    /// every one), in one of `roots` when they are given. `score` rates route `r`'s template, `None`
    /// when the call's path cannot address it.
    fn best_routes(
        &self,
        files: &[Arc<FileEntry>],
        caller: u32,
        method: Option<&str>,
        roots: Option<&[u16]>,
        declared: Declared,
        score: impl Fn(usize) -> Option<usize>,
    ) -> Vec<u32> {
        let mut best = 0usize;
        let mut found: Vec<u32> = Vec::new();
        for (r, route) in self.routes.iter().enumerate() {
            // A route registered by a test (a stub server) is reached only by tests.
            if route.from_spec != (declared == Declared::InSpec)
                || route.at.file == caller
                || (files[route.at.file as usize].is_test && !files[caller as usize].is_test)
                || roots.is_some_and(|roots| !roots.contains(&files[route.at.file as usize].root))
            {
                continue;
            }
            if let Some(m) = method
                && route.method != "ANY"
                && !route.method.eq_ignore_ascii_case(m)
            {
                continue;
            }
            let Some(score) = score(r) else {
                continue;
            };
            if score > best {
                best = score;
                found.clear();
            }
            if score == best {
                found.push(r as u32);
            }
        }
        found
    }
}

/// The API version a URL asks for in its query (`?api-version=2.0`, `&api-version=2`, also
/// after a query held in a name, `{uri}&api-version=2.0`), as [`api_version`] normalises it;
/// `None` when it asks for none or the value is not literal.
pub fn api_version_asked(url: &str) -> Option<String> {
    let url = url.split('#').next().unwrap_or(url);
    url.split(['?', '&']).skip(1).find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("api-version") && !v.contains(['{', '}']))
            .then(|| api_version(v))
            .flatten()
    })
}

/// An API version as routes and callers compare it: `1.0` and `1` (a major version alone)
/// are `1.0`, `2.1` stays, a date version (`2023-01-01`) or a status (`1.0-beta`) stays as
/// written; empty or spaced text is none.
pub fn api_version(v: &str) -> Option<String> {
    let v = v.trim();
    if v.is_empty() || v.contains(char::is_whitespace) {
        return None;
    }
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!("{v}.0"));
    }
    Some(v.to_string())
}

#[cfg(test)]
mod version_tests {
    use super::*;

    #[test]
    fn api_versions_asked_and_normalised() {
        assert_eq!(
            api_version_asked("/api/items?api-version=2.0").as_deref(),
            Some("2.0")
        );
        assert_eq!(
            api_version_asked("{uri}&Api-Version=1").as_deref(),
            Some("1.0")
        );
        assert_eq!(
            api_version_asked("/x?a=1&api-version=2023-01-01#frag").as_deref(),
            Some("2023-01-01")
        );
        for none in [
            "/api/items",
            "/api/items?api-version={v}",
            "/api/items?api-version=",
            "/api-version=2.0",
            "/größe?version=2.0",
        ] {
            assert_eq!(api_version_asked(none), None, "{none}");
        }
        assert_eq!(api_version("2").as_deref(), Some("2.0"));
        assert_eq!(api_version(" 1.0 ").as_deref(), Some("1.0"));
        assert_eq!(api_version("1.0-beta").as_deref(), Some("1.0-beta"));
        assert_eq!(api_version("1 0"), None);
    }
}

/// Where the routes a call is matched against are declared: code first; API contracts
/// only when no code serves the path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Declared {
    InCode,
    InSpec,
}

/// What joining HTTP calls to routes needs besides the graph: the files, the resolver, each
/// route's template segments, the roots' service names and the generated clients' requests.
struct HttpJoin<'a> {
    files: &'a [Arc<FileEntry>],
    resolver: &'a Resolver<'a>,
    templates: Vec<Vec<RouteSeg>>,
    service_names: Vec<String>,
    client_methods: HashMap<String, Vec<(u32, &'a HttpFact)>>,
    /// The call-site arguments of every file ([`crate::index::lang::bind::call_arg_name`]
    /// bindings) by name, as (file, binding index).
    call_args: HashMap<&'a str, Vec<(u32, u32)>>,
}

/// The most call sites one helper's request is listed at.
const MAX_HELPER_SITES: usize = 64;

/// The most call sites of a helper's name read to find them (each one's file relation is
/// checked).
const MAX_HELPER_SITES_READ: usize = 4096;

impl HttpJoin<'_> {
    /// Whether a call in file `site` can be a call of a helper declared in file `helper`:
    /// the same file or scope (package, namespace, directory), or `site` imports `helper`.
    fn related(&self, site: u32, helper: u32) -> bool {
        if site == helper {
            return true;
        }
        let (s, h) = (&self.files[site as usize], &self.files[helper as usize]);
        if super::resolve::scope_of(s) == super::resolve::scope_of(h) {
            return true;
        }
        s.facts().imports.iter().any(|imp| {
            let m = imp.module.as_str();
            let name = if m.starts_with("./") || m.starts_with("../") {
                m
            } else {
                imp.alias
                    .as_deref()
                    .unwrap_or_else(|| m.rsplit(['/', '.', '\\']).next().unwrap_or(m))
            };
            self.resolver.module_files(site, name).contains(&helper)
        })
    }
}

/// The call-site argument bindings of `files` by name.
fn call_args(files: &[Arc<FileEntry>]) -> HashMap<&str, Vec<(u32, u32)>> {
    let mut out: HashMap<&str, Vec<(u32, u32)>> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        for (bi, b) in f.facts().call_args.iter().enumerate() {
            out.entry(b.name.as_str())
                .or_default()
                .push((fi as u32, bi as u32));
        }
    }
    out
}

/// The requests generated clients make, by `Class.method()` of the method they are in:
/// a call of that method elsewhere is that request (`this.ordersApi.createOrder(…)`).
fn generated_client_methods(files: &[Arc<FileEntry>]) -> HashMap<String, Vec<(u32, &HttpFact)>> {
    let mut client_methods: HashMap<String, Vec<(u32, &HttpFact)>> = HashMap::new();
    for (fi, f) in files.iter().enumerate().filter(|(_, f)| f.generated) {
        for h in &f.facts().http {
            let HttpFact::Call { line, .. } = h else {
                continue;
            };
            let inner = f
                .symbols()
                .iter()
                .filter(|s| s.line <= *line && *line <= s.end_line)
                .max_by_key(|s| s.line);
            if let Some(s) = inner
                && let Some(class) = f.container(s)
            {
                let key = format!("{class}.{}()", f.name(s));
                client_methods.entry(key).or_default().push((fi as u32, h));
            }
        }
    }
    client_methods
}

/// The services whose clients `files` of one package (`package`, indexes into `files`) store
/// in each variable or field name, each once.
fn field_clients<'f>(
    files: &'f [Arc<FileEntry>],
    package: &[usize],
) -> HashMap<&'f str, Vec<&'f str>> {
    let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
    for &pi in package {
        for fact in &files[pi].facts().grpc {
            if let GrpcFact::Client {
                service,
                var: Some(var),
                ..
            } = fact
            {
                let services = out.entry(var.as_str()).or_default();
                if !services.contains(&service.as_str()) {
                    services.push(service);
                }
            }
        }
    }
    out
}

/// A file's root and directory: the files of one package, for a server whose methods live in
/// another file of its package (Go).
fn dir_of(f: &FileEntry) -> (u16, &str) {
    (f.root, f.path.rsplit_once('/').map_or("", |(d, _)| d))
}

/// The services each implementation type serves, from the registrations that name both:
/// registrations that name only the implementation (`MapGrpcService<BasketService>()`) take
/// the service from the class that implements it.
fn impl_services(files: &[Arc<FileEntry>]) -> HashMap<&str, Vec<&str>> {
    let mut impl_services: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in files.iter().filter(|f| !f.generated) {
        for fact in &f.facts().grpc {
            if let GrpcFact::Server {
                service,
                impl_type: Some(t),
                ..
            } = fact
                && !service.is_empty()
            {
                let list = impl_services.entry(t.as_str()).or_default();
                if !list.contains(&service.as_str()) {
                    list.push(service.as_str());
                }
            }
        }
    }
    impl_services
}

/// The label of each file's root, from its workspace path and root-relative path.
pub(super) fn root_labels(files: &[Arc<FileEntry>], paths: &[String]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for (f, p) in files.iter().zip(paths) {
        let root = f.root as usize;
        if labels.len() <= root {
            labels.resize(root + 1, String::new());
        }
        if labels[root].is_empty() {
            let label = p
                .strip_suffix(&*f.path)
                .map(|l| l.trim_end_matches('/'))
                .unwrap_or("");
            labels[root] = if label.is_empty() {
                ".".into()
            } else {
                label.into()
            };
        }
    }
    labels
}

/// One segment of a route template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RouteSeg {
    Lit(String),
    Param,
    /// A catch-all (`*`, `**`, `{*rest}`, `{**path}`): the rest of the path.
    Rest,
}

fn route_segments(template: &str) -> Vec<RouteSeg> {
    // The query or fragment starts at a `?`/`#` outside braces: `{brandId?}` (an optional
    // ASP.NET parameter) is a segment.
    let mut depth = 0i32;
    let end = template
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            depth <= 0 && matches!(c, '?' | '#')
        })
        .map_or(template.len(), |(i, _)| i);
    template[..end]
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            // `{rest...}`: a Go 1.22 wildcard for the rest of the path.
            if s == "*"
                || s == "**"
                || s.starts_with("{*")
                || s.starts_with("*")
                || (s.starts_with('{') && s.ends_with("...}"))
            {
                RouteSeg::Rest
            } else if (s.starts_with('{') && s.ends_with('}'))
                || s.starts_with(':')
                || (s.starts_with('<') && s.ends_with('>'))
                || (s.starts_with('[') && s.ends_with(']'))
                || (s.starts_with('$') && s.len() > 1)
            {
                RouteSeg::Param
            } else {
                RouteSeg::Lit(s.to_lowercase())
            }
        })
        .collect()
}

/// How well a call's path (literal segments, `None` for run-time ones) addresses a route
/// template: the number of literal segments that matched a literal, or `None` when it cannot
/// address it. At least one literal must match a literal, so a path made only of run-time
/// parts (`base + "/" + x`) never matches every one-segment route.
fn segments_match(call: &[Option<String>], template: &[RouteSeg]) -> Option<usize> {
    let rest = template.last() == Some(&RouteSeg::Rest);
    let fixed = if rest {
        template.len() - 1
    } else {
        template.len()
    };
    if call.len() != fixed && !(rest && call.len() >= fixed) {
        return None;
    }
    // A literal matching a literal counts 2, anything matching a parameter 1, a run-time
    // segment against a literal 0: `/product/{}` prefers `/product/:sku` to `/product/list`.
    let mut score = 0;
    let mut literal = false;
    for (c, t) in call.iter().zip(template) {
        match (c, t) {
            (_, RouteSeg::Rest) => break,
            (Some(c), RouteSeg::Lit(t)) => {
                if !c.eq_ignore_ascii_case(t) {
                    return None;
                }
                score += 2;
                literal = true;
            }
            (_, RouteSeg::Param) => score += 1,
            (None, RouteSeg::Lit(_)) => {}
        }
    }
    literal.then_some(score)
}

/// Like [`segments_match`], for the rest of a path after a prefix that named the service:
/// run-time segments alone may address a parameter route (`/{id}` → `/:id`), and the score
/// is the number of segments that matched.
fn segments_match_named(call: &[Option<String>], template: &[RouteSeg]) -> Option<usize> {
    if call.is_empty() && template.is_empty() {
        return Some(1);
    }
    let rest = template.last() == Some(&RouteSeg::Rest);
    let fixed = if rest {
        template.len() - 1
    } else {
        template.len()
    };
    if call.len() != fixed && !(rest && call.len() >= fixed) {
        return None;
    }
    let mut score = 1;
    for (c, t) in call.iter().zip(template) {
        match (c, t) {
            (_, RouteSeg::Rest) => break,
            (Some(c), RouteSeg::Lit(t)) => {
                if !c.eq_ignore_ascii_case(t) {
                    return None;
                }
                score += 2;
            }
            // After a prefix that named the service, a run-time segment never stands for
            // a literal one.
            (None, RouteSeg::Lit(_)) => return None,
            (_, RouteSeg::Param) => score += 1,
        }
    }
    Some(score)
}

/// A resolved URL as route matching needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UrlShape {
    /// Names the host came from: the literal host (`cart`), the env var, config key or
    /// variable holding the base (`CATALOGUE_HOST`, `retail.ui.endpoints.catalog`).
    host_hints: Vec<String>,
    /// The path's segments (`None` for a run-time one); `None` when the URL shows no path.
    path: Option<Vec<Option<String>>>,
    /// The URL as an answer shows it.
    display: String,
}

/// Why an HTTP call whose path has no literal segment is unresolved: what the URL came from
/// when it was a name (a parameter, a field read from a database row, a setting), which is
/// what a reader follows. `has_path`: the URL has a path, only built at run time.
fn why_no_path(resolved: &Resolved, has_path: bool) -> String {
    if has_path {
        match resolved.why_unresolved() {
            Some(w) if w != "built at run time" => {
                format!("the path is built at run time: {w}")
            }
            _ => "the path is built at run time".to_string(),
        }
    } else {
        resolved
            .why_unresolved()
            .map(|w| format!("the URL is not known statically: {w}"))
            .unwrap_or_else(|| "the URL has no path".to_string())
    }
}

/// The [`HttpFact::Prefix`] facts of one file as `(first line, last line, prefix)`, each
/// prefix resolved across the snapshot; a part that does not resolve is kept as `{name}`, so
/// the route still shows (and matches) where its prefix is unknown.
fn named_route_prefixes(
    resolver: &Resolver,
    fi: u32,
    http: &[HttpFact],
) -> Vec<(u32, u32, String)> {
    http.iter()
        .filter_map(|h| match h {
            HttpFact::Prefix {
                prefix,
                first,
                last,
                ..
            } => Some((
                *first,
                *last,
                super::mounts::shown_prefix(&resolver.resolve(fi, prefix)),
            )),
            _ => None,
        })
        .collect()
}

fn url_shape(r: &Resolved) -> UrlShape {
    // One string with a marker byte per hole, so the split below can see where they are.
    const HOLE: char = '\u{1}';
    let mut text = String::new();
    let mut holes: Vec<&Seg> = Vec::new();
    let mut display = String::new();
    for s in &r.segs {
        match s {
            Seg::Lit(t) => {
                text.push_str(t);
                display.push_str(t);
            }
            Seg::Hole { name, kind } => {
                text.push(HOLE);
                holes.push(s);
                match (name, kind) {
                    (Some(n), HoleKind::Env) => display.push_str(&format!("{{env {n}}}")),
                    (Some(n), HoleKind::Config) => display.push_str(&format!("{{config {n}}}")),
                    (Some(n), _) => match crate::index::lang::bind::describe_call_arg(n) {
                        Some(arg) => display.push_str(&format!("{{{arg}}}")),
                        None => display.push_str(&format!("{{{n}}}")),
                    },
                    (None, _) => display.push_str("{}"),
                }
            }
        }
    }
    let hole_names = |part: &str, holes_before: usize| -> Vec<String> {
        let n = part.matches(HOLE).count();
        holes[holes_before..holes_before + n]
            .iter()
            .filter_map(|h| match h {
                Seg::Hole { name: Some(n), .. } => Some(n.clone()),
                _ => None,
            })
            .collect()
    };
    // The query string and fragment are not part of the route.
    let cut = text.find(['?', '#']).unwrap_or(text.len());
    let text = &text[..cut];
    let mut host_hints = Vec::new();
    let (path, holes_before): (Option<&str>, usize) = if let Some(i) = text.find("://") {
        let after = &text[i + 3..];
        let host_end = after.find('/').unwrap_or(after.len());
        let host = &after[..host_end];
        let literal_host: String = host
            .split(':')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|&c| c != HOLE)
            .collect();
        if !literal_host.is_empty() {
            host_hints.push(literal_host);
        }
        let before = text[..i + 3 + host_end].matches(HOLE).count();
        host_hints.extend(hole_names(&text[..i + 3 + host_end], 0));
        (Some(&after[host_end..]), before)
    } else if text.starts_with(HOLE) {
        // A base held in a variable, an env var or a config key, then the path.
        host_hints.extend(hole_names(&text[..HOLE.len_utf8()], 0));
        (Some(&text[HOLE.len_utf8()..]), 1)
    } else {
        (Some(text), 0)
    };
    let path = path.map(|p| {
        let mut segs = Vec::new();
        for seg in p.split('/').filter(|s| !s.is_empty()) {
            if seg.contains(HOLE) {
                segs.push(None);
            } else {
                segs.push(Some(seg.to_string()));
            }
        }
        segs
    });
    let _ = holes_before;
    UrlShape {
        host_hints,
        path,
        display,
    }
}

/// The name a root goes by when code names it in a host, an env var or a config key:
/// its last folder, lower case, without separators and the usual suffixes
/// (`src/Catalog.API` → `catalog`, `basket-api` → `basket`, `CATALOGUE_HOST` → `catalogue`).
pub fn service_name(label: &str) -> String {
    let last = label
        .rsplit(['/', '.'])
        .find(|s| !s.is_empty() && !is_suffix_word(s));
    let base = label.rsplit('/').next().unwrap_or(label);
    let _ = last;
    strip_service_words(base)
}

fn is_suffix_word(w: &str) -> bool {
    matches!(
        w.to_ascii_lowercase().as_str(),
        "api"
            | "svc"
            | "client"
            | "service"
            | "server"
            | "host"
            | "url"
            | "uri"
            | "addr"
            | "address"
            | "endpoint"
            | "endpoints"
            | "base"
            | "baseurl"
            | "port"
            | "http"
            | "https"
            | "grpc"
            | "web"
            | "app"
    )
}

/// Lower case, words split at `.`, `-`, `_` and camel humps, suffix words dropped from the end.
fn strip_service_words(s: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c == '.' || c == '-' || c == '_' || c == ' ' || c == '+' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    while words.len() > 1 && words.last().is_some_and(|w| is_suffix_word(w)) {
        words.pop();
    }
    words.concat()
}

/// The root a host hint names (`cart`, `CATALOGUE_HOST`, `retail.ui.endpoints.catalog`,
/// `catalog-api`): equal service names, or one a prefix of the other of at least 4 letters
/// (`catalog` / `catalogue`); `None` unless exactly one root fits.
pub(super) fn root_named(hint: &str, service_names: &[String]) -> Option<u16> {
    // A dotted config key names the service by its last segment.
    let hint = if hint.contains('.') && !hint.contains("://") && hint.chars().all(|c| c != ':') {
        hint.rsplit('.').next().unwrap_or(hint)
    } else {
        hint
    };
    let want = strip_service_words(hint);
    if want.len() < 3 {
        return None;
    }
    // Equal names first; a prefix of at least 4 letters only when no name is equal.
    let unique = |found: &mut dyn Iterator<Item = u16>| -> Option<u16> {
        let first = found.next()?;
        found.next().is_none().then_some(first)
    };
    let mut equal = service_names
        .iter()
        .enumerate()
        .filter(|(_, n)| **n == want)
        .map(|(i, _)| i as u16)
        .peekable();
    if equal.peek().is_some() {
        return unique(&mut equal);
    }
    let mut prefixed = service_names
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            n.len() >= 4
                && want.len() >= 4
                && (n.starts_with(&want) || want.starts_with(n.as_str()))
        })
        .map(|(i, _)| i as u16);
    unique(&mut prefixed)
}

/// The key services are matched by: the last dotted segment, lowercase, with a `Service`,
/// `Grpc` or `ServiceGrpc` suffix removed (`orders.v1.OrderService` → `order`).
pub fn service_key(name: &str) -> String {
    let lower = name.to_lowercase();
    let lower = lower.rsplit('.').next().unwrap_or(&lower).to_string();
    for suffix in ["servicegrpc", "grpc", "service"] {
        if let Some(stripped) = lower.strip_suffix(suffix)
            && !stripped.is_empty()
        {
            return stripped.to_string();
        }
    }
    lower
}

fn dedup_links(links: &mut Vec<RpcLink>) {
    crate::order::sort_by_key(links, |l| (l.rpc, l.at, l.confidence));
    links.dedup_by(|a, b| a.rpc == b.rpc && a.at == b.at);
}

/// Whether a client's path literal can address a route template. `{id}`, `:id` and `<id>`
/// segments match anything; a literal ending in `/` (the rest is built at run time) matches a
/// route with exactly one more segment, which must be a parameter.
pub fn path_matches(call: &str, template: &str) -> bool {
    let call = call.split(['?', '#']).next().unwrap_or(call);
    let call = match call.find("://") {
        Some(i) => call[i + 3..].find('/').map_or("", |j| &call[i + 3 + j..]),
        None => call,
    };
    if !call.starts_with('/') {
        return false;
    }
    let is_param = |s: &str| {
        (s.starts_with('{') && s.ends_with('}'))
            || s.starts_with(':')
            || (s.starts_with('<') && s.ends_with('>'))
    };
    let open_end = call.ends_with('/') && call.len() > 1;
    let c: Vec<&str> = call
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let t: Vec<&str> = template
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let lengths_ok =
        c.len() == t.len() || (open_end && t.len() == c.len() + 1 && is_param(t[c.len()]));
    lengths_ok
        && c.iter()
            .zip(&t)
            .all(|(cs, ts)| is_param(ts) || is_param(cs) || cs == ts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_keys_fold_case_and_underscores() {
        assert_eq!(method_key("CreateOrder"), method_key("create_order"));
        assert_eq!(method_key("createOrder"), "createorder");
    }

    #[test]
    fn path_templates_match_literals() {
        // An optional ASP.NET parameter is a parameter, not the start of a query string.
        let t = route_segments("/api/catalog/items/type/{typeId}/brand/{brandId?}");
        assert_eq!((t.len(), &t[6]), (7, &RouteSeg::Param));
        let t = route_segments("/items/all/brand/{brandId:int?}?x=1");
        assert_eq!((t.len(), &t[3]), (4, &RouteSeg::Param));
        assert!(path_matches("/orders/", "/orders/{id}"));
        assert!(path_matches("/orders/42", "/orders/:id"));
        assert!(path_matches("http://orders:8080/orders/", "/orders/{id}"));
        assert!(path_matches("/notify", "/notify"));
        assert!(!path_matches("/orders", "/orders/{id}"));
        assert!(!path_matches("/payments/", "/orders/{id}"));
        assert!(!path_matches("/orders/x/y", "/orders/{id}"));
        assert!(!path_matches("orders", "/orders"));
    }

    #[test]
    fn service_keys_tolerate_suffixes() {
        assert_eq!(service_key("OrderService"), service_key("Order"));
        assert_eq!(service_key("orders.v1.OrderService"), "order");
    }

    fn shape(parts: Vec<Seg>) -> UrlShape {
        url_shape(&Resolved::exact(parts))
    }

    #[test]
    fn urls_split_into_host_hints_and_path_segments() {
        let s = shape(vec![
            Seg::Lit("http://".into()),
            Seg::hole(Some("CATALOGUE_HOST"), HoleKind::Env),
            Seg::Lit(":8080/product/".into()),
            Seg::hole(None, HoleKind::Dynamic),
            Seg::Lit("?x=1".into()),
        ]);
        assert_eq!(s.host_hints, vec!["CATALOGUE_HOST".to_string()]);
        assert_eq!(s.path, Some(vec![Some("product".into()), None]));
        assert_eq!(s.display, "http://{env CATALOGUE_HOST}:8080/product/{}?x=1");
        let s = shape(vec![
            Seg::Lit("http://cart:8080/shipping/".into()),
            Seg::hole(None, HoleKind::Dynamic),
        ]);
        assert_eq!(s.host_hints, vec!["cart".to_string()]);
        assert_eq!(s.path, Some(vec![Some("shipping".into()), None]));
        let s = shape(vec![
            Seg::hole(Some("retail.ui.endpoints.catalog"), HoleKind::Config),
            Seg::Lit("/catalog/products".into()),
        ]);
        assert_eq!(
            s.host_hints,
            vec!["retail.ui.endpoints.catalog".to_string()]
        );
        assert_eq!(
            s.path,
            Some(vec![Some("catalog".into()), Some("products".into())])
        );
        // A relative path (an HttpClient with a base address).
        let s = shape(vec![
            Seg::Lit("api/catalog/items/".into()),
            Seg::hole(None, HoleKind::Dynamic),
        ]);
        assert!(s.host_hints.is_empty());
        assert_eq!(
            s.path,
            Some(vec![
                Some("api".into()),
                Some("catalog".into()),
                Some("items".into()),
                None
            ])
        );
    }

    #[test]
    fn segments_match_prefers_literals_and_never_matches_on_runtime_parts_alone() {
        let t = route_segments("/product/:sku");
        assert_eq!(segments_match(&[Some("product".into()), None], &t), Some(3));
        assert_eq!(
            segments_match(
                &[Some("product".into()), None],
                &route_segments("/product/list")
            ),
            Some(2)
        );
        // `base + "/" + x`: only run-time segments never match a route.
        assert_eq!(segments_match(&[None], &route_segments("/:id")), None);
        assert_eq!(segments_match(&[None], &route_segments("/health")), None);
        assert_eq!(
            segments_match(
                &[Some("Api".into()), Some("Orders".into())],
                &route_segments("/api/orders")
            ),
            Some(4)
        );
        assert_eq!(
            segments_match(
                &[Some("a".into()), Some("b".into()), Some("c".into())],
                &route_segments("/a/{*rest}")
            ),
            Some(2)
        );
        assert_eq!(
            segments_match(
                &[Some("items".into()), None],
                &route_segments("/items/{id:int}")
            ),
            Some(3)
        );
        assert_eq!(
            segments_match_named(&[None], &route_segments("/:id")),
            Some(2)
        );
        assert_eq!(
            segments_match_named(&[None], &route_segments("/health")),
            None
        );
    }

    #[test]
    fn hosts_env_vars_and_config_keys_name_services() {
        let names: Vec<String> = [
            "cart",
            "catalogue",
            "src/Basket.API",
            "src/Catalog.API",
            "src/ui",
            "services/payments",
        ]
        .iter()
        .map(|r| service_name(r))
        .collect();
        assert_eq!(names[2], "basket");
        assert_eq!(names[3], "catalog");
        assert_eq!(root_named("CATALOGUE_HOST", &names), Some(1));
        assert_eq!(root_named("cart", &names), Some(0));
        assert_eq!(root_named("basket-api", &names), Some(2));
        // An equal name wins over a prefix (`catalog` is also a prefix of `catalogue`).
        assert_eq!(root_named("retail.ui.endpoints.catalog", &names), Some(3));
        assert_eq!(root_named("PAYMENTS_URL", &names), Some(5));
        assert_eq!(root_named("http", &names), None);
        assert_eq!(root_named("localhost", &names), None);
    }

    #[test]
    fn importing_a_generated_contract_package_is_not_a_service_edge() {
        use crate::index::facts::{FileFacts, Import};
        use crate::index::snapshot::Snapshot;
        let stub = FileFacts {
            package: Some("acme.orders.v1".into()),
            generated: true,
            ..FileFacts::default()
        };
        let model = FileFacts {
            package: Some("acme.billing".into()),
            ..FileFacts::default()
        };
        let user = |module: &str| FileFacts {
            package: Some("acme.web".into()),
            imports: vec![Import::plain(module, &[], 3)],
            ..FileFacts::default()
        };
        let snap = Snapshot::from_facts(vec![
            ("orders", "gen/OrdersGrpc.java", stub),
            ("billing", "src/Invoice.java", model),
            ("web", "src/A.java", user("acme.orders.v1.OrdersGrpc")),
            ("web", "src/B.java", user("acme.billing.Invoice")),
        ]);
        let links: Vec<&str> = snap
            .graph
            .import_links
            .iter()
            .map(|l| l.module.as_str())
            .collect();
        assert_eq!(links, vec!["acme.billing.Invoice"]);
    }

    /// ASP.NET API versioning: one path served by a handler per version (both kept), a route
    /// of a group serving two versions, one narrowed by `MapToApiVersion`; a caller asking
    /// `?api-version=2.0` reaches the 2.0 handler only, one asking none reaches both.
    #[test]
    fn a_caller_asking_an_api_version_reaches_the_routes_serving_it() {
        use crate::index::facts::Language;
        let api = r#"public static class CatalogApi {
    public static IEndpointRouteBuilder MapCatalogApi(this IEndpointRouteBuilder app) {
        var vApi = app.NewVersionedApi("Catalog");
        var api = vApi.MapGroup("api/catalog").HasApiVersion(1, 0).HasApiVersion(2, 0);
        var v1 = vApi.MapGroup("api/catalog").HasApiVersion(1.0);
        var v2 = vApi.MapGroup("api/catalog").HasApiVersion(new ApiVersion(2, 0));
        v1.MapGet("/items", GetAllItemsV1).WithName("ListItems");
        v2.MapGet("/items", GetAllItems).WithName("ListItems-V2");
        api.MapGet("/items/{id:int}", GetItemById);
        api.MapGet("/größe", GetSize).MapToApiVersion(2.0);
        app.MapGet("/health", Health);
        return app;
    }
}
"#;
        let client = r#"public class CatalogClient(HttpClient http) {
    private const string ApiVersion = "api-version=2.0";
    public Task V2() => http.GetFromJsonAsync<Page>($"http://catalog/api/catalog/items?{ApiVersion}");
    public Task V1() => http.GetFromJsonAsync<Page>("http://catalog/api/catalog/items?api-version=1");
    public Task Any() => http.GetFromJsonAsync<Page>("http://catalog/api/catalog/items");
    public Task One(int id) => http.GetFromJsonAsync<Item>($"http://catalog/api/catalog/items/{id}?api-version=2.0");
}
"#;
        let snap = graph_of(&[
            (
                "src/Catalog.API",
                "Apis/CatalogApi.cs",
                Language::CSharp,
                api,
            ),
            ("src/Web", "CatalogClient.cs", Language::CSharp, client),
        ]);
        let g = &snap.graph;
        let labels: Vec<(String, u32)> = g.routes.iter().map(|r| (r.label(), r.at.line)).collect();
        assert_eq!(
            labels,
            vec![
                ("GET /api/catalog/items (v1.0)".to_string(), 7),
                ("GET /api/catalog/items (v2.0)".to_string(), 8),
                (
                    "GET /api/catalog/items/{id:int} (v1.0, v2.0)".to_string(),
                    9
                ),
                ("GET /api/catalog/größe (v2.0)".to_string(), 10),
                ("GET /health".to_string(), 11),
            ]
        );
        let reached = |line: u32| -> Vec<u32> {
            let mut r: Vec<u32> = g
                .route_calls
                .iter()
                .filter(|c| c.at.line == line)
                .map(|c| g.routes[c.route as usize].at.line)
                .collect();
            r.sort();
            r
        };
        assert_eq!(reached(3), vec![8]);
        assert_eq!(reached(4), vec![7]);
        // No version asked: the default one is the server's choice, so both.
        assert_eq!(reached(5), vec![7, 8]);
        assert_eq!(reached(6), vec![9]);
    }

    #[test]
    fn a_route_registered_by_a_test_is_reached_only_by_tests() {
        use crate::index::facts::{FileFacts, HttpFact};
        use crate::index::snapshot::Snapshot;
        let route = |path: &str| FileFacts {
            http: vec![HttpFact::route("GET", path, None, 5)],
            ..FileFacts::default()
        };
        let call = FileFacts {
            http: vec![HttpFact::call(Some("GET"), "http://ui:8080/catalog", 9)],
            ..FileFacts::default()
        };
        let snap = Snapshot::from_facts(vec![
            ("catalog", "test/main_test.go", route("/catalog")),
            ("ui", "web/catalog.go", route("/catalog")),
            ("loadgen", "run.go", call.clone()),
            ("loadgen", "run_test.go", call),
        ]);
        let g = &snap.graph;
        let mut reached: Vec<(&str, &str)> = g
            .route_calls
            .iter()
            .map(|rc| {
                (
                    &*snap.files[rc.at.file as usize].path,
                    &*snap.files[g.routes[rc.route as usize].at.file as usize].path,
                )
            })
            .collect();
        reached.sort();
        // The test stub of another service is no target for the load generator's own code.
        assert!(reached.contains(&("run.go", "web/catalog.go")));
        assert!(!reached.contains(&("run.go", "test/main_test.go")));
    }

    #[test]
    fn a_path_only_an_api_contract_declares_is_reached_through_it() {
        use crate::index::facts::{FileFacts, HttpFact};
        use crate::index::snapshot::Snapshot;
        let routes = |paths: &[&str]| FileFacts {
            http: paths
                .iter()
                .map(|p| HttpFact::route("GET", p, None, 3))
                .collect(),
            ..FileFacts::default()
        };
        let calls = FileFacts {
            http: [
                "http://recs/recommendations/42",
                "http://catalog/catalog",
                "/nowhere",
            ]
            .iter()
            .map(|u| HttpFact::call(Some("GET"), u, 9))
            .collect(),
            ..FileFacts::default()
        };
        let snap = Snapshot::from_facts(vec![
            (
                "recs",
                "recs/openapi.yml",
                routes(&["/recommendations/{productId}"]),
            ),
            ("catalog", "catalog/openapi.yml", routes(&["/catalog"])),
            ("catalog", "catalog/main.go", routes(&["/catalog"])),
            ("ui", "ui/client.go", calls),
        ]);
        let g = &snap.graph;
        let mut reached: Vec<&str> = g
            .route_calls
            .iter()
            .map(|rc| &*snap.files[g.routes[rc.route as usize].at.file as usize].path)
            .collect();
        reached.sort();
        // The code route wins over its own contract; the contract stands in where no code
        // serves the path; a path nothing declares stays unresolved.
        assert_eq!(reached, ["catalog/main.go", "recs/openapi.yml"]);
        assert_eq!(g.unresolved_calls.len(), 1);
        assert_eq!(
            g.unresolved_calls[0].why,
            "no route in the workspace has this path"
        );
    }

    /// Routes `POST /shipping/:id` (cart) and the URLs reaching it from `lang` sources.
    fn ctor_base_reaches(files: Vec<(&str, &str, &str)>) -> Vec<(String, u32)> {
        use crate::index::facts::Language;
        use crate::index::snapshot::Snapshot;
        let mut facts = vec![(
            "cart",
            "server.js",
            crate::index::lang::extract(
                Language::JavaScript,
                "server.js",
                "app.post('/shipping/:id', (req, res) => {});\n",
            ),
        )];
        for (root, path, text) in files {
            let lang = Language::of_path(path).unwrap();
            facts.push((root, path, crate::index::lang::extract(lang, path, text)));
        }
        let snap = Snapshot::from_facts(facts);
        snap.graph
            .route_calls
            .iter()
            .map(|rc| (snap.files[rc.at.file as usize].path.to_string(), rc.at.line))
            .collect()
    }

    #[test]
    fn a_queue_passed_to_a_constructor_in_another_file_names_the_topic() {
        use crate::index::facts::Language;
        use crate::index::snapshot::Snapshot;
        // The SQS provider keeps its queue from the constructor; one config passes a literal,
        // another a Spring property with no default in code.
        let provider = "package shop;\npublic class SqsProvider {\n  private final String queue;\n  private final SqsOperations template;\n  public SqsProvider(String queue, SqsOperations template) {\n    this.queue = queue;\n    this.template = template;\n  }\n  public void publish(Object e) {\n    template.send(to -> to.queue(queue).payload(e));\n  }\n}\n";
        let literal = "package shop;\nclass Config {\n  SqsProvider p() { return new SqsProvider(\"orders-queue\", t); }\n}\n";
        let property = "package shop;\nclass PropConfig {\n  @Value(\"${shop.sqs.queue}\")\n  private String queueName;\n  SqsProvider p() { return new SqsProvider(queueName, t); }\n}\n";
        let topics = |files: &[(&str, &str)]| -> Vec<(String, String)> {
            let facts = files
                .iter()
                .map(|(path, text)| {
                    (
                        "orders",
                        *path,
                        crate::index::lang::extract(Language::Java, path, text),
                    )
                })
                .collect();
            let snap = Snapshot::from_facts(facts);
            let g = &snap.graph;
            let mut out: Vec<(String, String)> = g
                .events
                .iter()
                .map(|e| (g.topics[e.topic as usize].name.clone(), e.how.clone()))
                .collect();
            out.extend(
                g.unresolved_events
                    .iter()
                    .map(|(_, why)| ("?".into(), why.clone())),
            );
            out
        };
        let found = topics(&[("SqsProvider.java", provider), ("Config.java", literal)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "orders-queue");
        // The property's name is the reason the site stays unresolved, not an unknown field.
        let found = topics(&[
            ("SqsProvider.java", provider),
            ("PropConfig.java", property),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.contains("shop.sqs.queue"), "{found:?}");
    }

    #[test]
    fn sqs_queue_urls_in_constants_meet_the_queue_name_across_languages() {
        use crate::index::facts::{EventRole, Language};
        use crate::index::snapshot::Snapshot;
        let files = [
            (
                "orders",
                "app.py",
                "import boto3\nQUEUE_URL = \"https://sqs.us-east-1.amazonaws.com/1/orders\"\nsqs.send_message(QueueUrl=QUEUE_URL, MessageBody=b)\n",
            ),
            (
                "billing",
                "Worker.cs",
                "namespace B;\npublic class Worker {\n  private const string Queue = \"https://sqs.us-east-1.amazonaws.com/1/orders\";\n  public Task Run() => sqsClient.ReceiveMessageAsync(new ReceiveMessageRequest { QueueUrl = Queue });\n}\n",
            ),
            (
                "audit",
                "main.go",
                "package main\nconst queueURL = \"http://localhost:4566/000000000000/orders\"\nfunc f() { c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL)}) }\n",
            ),
        ];
        let facts = files
            .iter()
            .map(|(root, path, text)| {
                let lang = Language::of_path(path).unwrap();
                (*root, *path, crate::index::lang::extract(lang, path, text))
            })
            .collect();
        let snap = Snapshot::from_facts(facts);
        let g = &snap.graph;
        let mut links: Vec<(&str, EventRole, &str)> = g
            .events
            .iter()
            .map(|e| {
                (
                    g.topics[e.topic as usize].name.as_str(),
                    e.role,
                    &*snap.files[e.at.file as usize].path,
                )
            })
            .collect();
        links.sort_by_key(|l| l.2);
        assert_eq!(
            links,
            vec![
                ("orders", EventRole::Consumer, "Worker.cs"),
                ("orders", EventRole::Producer, "app.py"),
                ("orders", EventRole::Consumer, "main.go"),
            ],
            "unresolved: {:?}",
            g.unresolved_events
        );
        assert_eq!(g.topics.len(), 1);
    }

    #[test]
    fn a_base_url_passed_to_a_constructor_in_another_file_resolves() {
        // Java: the base is a field set from the constructor; `new CartHelper(CART_URL)` in
        // another file of the package gives it.
        let helper = "package shop;\nclass CartHelper {\n  private String baseUrl;\n  public CartHelper(String baseUrl) {\n    this.baseUrl = baseUrl;\n  }\n  String add(String id) {\n    HttpPost post = new HttpPost(baseUrl + id);\n    return client.execute(post).toString();\n  }\n}\n";
        let controller = "package shop;\nclass Controller {\n  private static final String CART_URL = String.format(\"http://%s/shipping/\", getenv(\"CART_ENDPOINT\", \"cart\"));\n  void go(String id) {\n    CartHelper helper = new CartHelper(CART_URL);\n    helper.add(id);\n  }\n}\n";
        // C#: the same through a primary field and `new`.
        let client = "namespace Shop;\npublic class CartClient {\n  private readonly string _base;\n  public CartClient(string baseUrl) {\n    _base = baseUrl;\n  }\n  public Task Add(string id) => _http.PostAsync(_base + id, null);\n}\n";
        let user = "namespace Shop;\npublic class Worker {\n  private readonly CartClient _c = new CartClient(\"http://cart/shipping/\");\n}\n";
        // TypeScript: `constructor(private base)` kept in `this.base`.
        let ts = "export class CartClient {\n  private base: string;\n  constructor(base: string) {\n    this.base = base;\n  }\n  add(id: string) {\n    return axios.post(this.base + id);\n  }\n}\n";
        let ts_user = "import { CartClient } from './cart-client';\nconst cart = new CartClient('http://cart/shipping/');\n";
        // Each case: the class taking the base (its file and text), the file constructing it,
        // and the line of the request that reaches the route.
        for (class_path, class, user_path, user, line) in [
            ("CartHelper.java", helper, "Controller.java", controller, 9),
            ("CartClient.cs", client, "Worker.cs", user, 7),
            ("src/cart-client.ts", ts, "src/main.ts", ts_user, 7),
        ] {
            assert_eq!(
                ctor_base_reaches(vec![
                    ("shipping", class_path, class),
                    ("shipping", user_path, user)
                ]),
                vec![(class_path.to_string(), line)],
                "{class_path}"
            );
        }
        // Negative: two constructions with different bases leave it run-time (no match of
        // every one-segment route), and so does a constructor nobody calls.
        let other = "package shop;\nclass Other {\n  void go() { new CartHelper(\"http://cart/other/\"); }\n}\n";
        assert!(
            ctor_base_reaches(vec![
                ("shipping", "CartHelper.java", helper),
                ("shipping", "Controller.java", controller),
                ("shipping", "Other.java", other),
            ])
            .is_empty()
        );
        assert!(ctor_base_reaches(vec![("shipping", "CartHelper.java", helper)]).is_empty());
        // What a construction passes is kept only when it may be a base: not a message.
        let f = crate::index::lang::extract(
            crate::index::facts::Language::TypeScript,
            "a.ts",
            "throw new Error('boom');\nconst c = new CartClient(BASE, 'http://cart/');\n",
        );
        let names: Vec<&str> = f.bindings.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, vec!["new CartClient#0", "new CartClient#1"]);
    }

    #[test]
    fn a_generated_clients_request_is_listed_with_its_method_not_as_a_caller() {
        use crate::index::facts::Language;
        use crate::index::snapshot::Snapshot;
        let api = "/**\n * NOTE: This class is auto generated by OpenAPI Generator.\n * Do not edit the class manually.\n */\nimport localVarRequest from 'request';\nexport class OrdersApi {\n  public async createOrder(order: Order) {\n    const localVarPath = this.basePath + '/orders';\n    const localVarRequestOptions: localVarRequest.Options = {\n      method: 'POST',\n      uri: localVarPath,\n    };\n    return localVarRequest(localVarRequestOptions, (error, response, body) => {});\n  }\n}\n";
        let route = "app.post('/orders', (req, res) => {});\n";
        let snap = Snapshot::from_facts(vec![
            (
                "checkout",
                "src/clients/orders/api/ordersApi.ts",
                crate::index::lang::extract(Language::TypeScript, "ordersApi.ts", api),
            ),
            (
                "orders",
                "server.js",
                crate::index::lang::extract(Language::JavaScript, "server.js", route),
            ),
        ]);
        assert!(snap.files[0].generated);
        assert!(snap.graph.route_calls.is_empty());
        let listed: Vec<(u32, &str)> = snap
            .graph
            .unresolved_calls
            .iter()
            .map(|u| (u.at.line, u.why.as_str()))
            .collect();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].0, 13);
        assert!(listed[0].1.contains("`createOrder`"));
        assert_eq!(
            snap.graph.unresolved_calls[0].method.as_deref(),
            Some("POST")
        );
        // A hand-written call of the generated method is that request, from its own site;
        // other methods of the instance are no requests at all (nothing unresolved either).
        let user = "import { OrdersApi } from '../clients/orders/api';\nexport class HttpOrdersService {\n  private ordersApi: OrdersApi;\n  constructor(endpoint: string) {\n    this.ordersApi = new OrdersApi(endpoint);\n  }\n  create(c: Checkout) {\n    this.ordersApi.setDefaultAuthentication(auth);\n    return this.ordersApi\n      .createOrder({ items: c.items })\n      .then((v) => v.body);\n  }\n}\n";
        let snap = Snapshot::from_facts(vec![
            (
                "checkout",
                "src/clients/orders/api/ordersApi.ts",
                crate::index::lang::extract(Language::TypeScript, "ordersApi.ts", api),
            ),
            (
                "checkout",
                "src/orders/HttpOrdersService.ts",
                crate::index::lang::extract(Language::TypeScript, "HttpOrdersService.ts", user),
            ),
            (
                "orders",
                "server.js",
                crate::index::lang::extract(Language::JavaScript, "server.js", route),
            ),
        ]);
        let calls: Vec<(&str, u32)> = snap
            .graph
            .route_calls
            .iter()
            .map(|rc| (&*snap.files[rc.at.file as usize].path, rc.at.line))
            .collect();
        assert_eq!(calls, vec![("src/orders/HttpOrdersService.ts", 10)]);
        assert_eq!(snap.graph.unresolved_calls.len(), 1);
    }

    #[test]
    fn handlers_are_found_on_every_class_registered_as_the_server() {
        use crate::index::facts::Language;
        let proto = "syntax = \"proto3\";\npackage shop;\nservice Offers {\n  rpc GetOffers(Req) returns (Res);\n}\n";
        let py = "import grpc\nimport offers_pb2_grpc\n\nclass RealOffers(offers_pb2_grpc.OffersServicer):\n    def GetOffers(self, request, context):\n        return None\n\nclass DummyOffers(offers_pb2_grpc.OffersServicer):\n    def GetOffers(self, request, context):\n        return None\n\ndef serve(dummy):\n    server = grpc.server(None)\n    if dummy:\n        offers_pb2_grpc.add_OffersServicer_to_server(DummyOffers(), server)\n    else:\n        offers_pb2_grpc.add_OffersServicer_to_server(RealOffers(), server)\n";
        let snap = graph_of(&[
            ("offers", "offers.proto", Language::Protobuf, proto),
            ("offers", "server.py", Language::Python, py),
        ]);
        let mut lines: Vec<u32> = snap.graph.handlers.iter().map(|h| h.at.line).collect();
        lines.sort();
        lines.dedup();
        assert_eq!(lines, vec![5, 9]);
    }

    #[test]
    fn a_go_call_through_a_field_typed_in_another_file_of_the_package_resolves() {
        use crate::index::facts::Language::{Go, Protobuf};
        let proto = "syntax = \"proto3\";\npackage shop;\nservice AdService {\n  rpc GetAds(Req) returns (Res);\n}\n";
        let main_go = "package main\n\ntype server struct {\n\tads pb.AdServiceClient\n\tlog *zap.Logger\n}\n\nfunc main() {\n\tsvc := new(server)\n\tsvc.ads = pb.NewAdServiceClient(conn)\n}\n";
        let rpc_go = "package main\n\nfunc (fe *server) ads(ctx context.Context) {\n\tresp, err := fe.ads.GetAds(ctx, &pb.Req{})\n\tfe.log.GetAds(\"not a client\")\n\tfe.other.GetAds(ctx, nil)\n}\n";
        let elsewhere = "package other\n\nfunc f(x *T) {\n\tx.ads.GetAds(ctx, nil)\n}\n";
        let snap = graph_of(&[
            ("shop", "ads.proto", Protobuf, proto),
            ("web", "main.go", Go, main_go),
            ("web", "rpc.go", Go, rpc_go),
            ("web", "other/f.go", Go, elsewhere),
        ]);
        let calls: Vec<(&str, u32, &str)> = snap
            .graph
            .calls
            .iter()
            .map(|c| {
                let path: &str = &snap.files[c.at.file as usize].path;
                (path, c.at.line, c.label.as_str())
            })
            .collect();
        // Only the call in the package that stores the client: not `log` (typed in the
        // struct), not `other` (no client of that name), not another package's `ads`.
        assert_eq!(calls, vec![("rpc.go", 4, "ads.GetAds")]);
    }

    #[test]
    fn a_node_server_mapping_its_handlers_lists_each_handler_once() {
        use crate::index::facts::Language::{JavaScript, Protobuf};
        let proto = "syntax = \"proto3\";\npackage shop;\nservice Currency {\n  rpc Convert(Req) returns (Res);\n  rpc GetRates(Req) returns (Res);\n}\n";
        let js = "const grpc = require('@grpc/grpc-js');\nfunction convert (call, cb) { cb(null, {}) }\nfunction getRates (call, cb) { cb(null, {}) }\nconst server = new grpc.Server();\nserver.addService(shop.Currency.service, {convert, getRates: getRates});\n";
        let snap = graph_of(&[
            ("shop", "currency.proto", Protobuf, proto),
            ("currency", "server.js", JavaScript, js),
        ]);
        let handlers: Vec<(u32, &str)> = snap
            .graph
            .handlers
            .iter()
            .map(|h| (h.at.line, h.label.as_str()))
            .collect();
        // Each at the function it names, not at the map entry.
        assert_eq!(
            handlers,
            vec![(2, "Currency.convert"), (3, "Currency.getRates")]
        );
    }

    #[test]
    fn calls_on_fields_of_a_large_package_read_its_clients_once() {
        // Each call on a field (every `s.log.Info(…)`) read every fact of the package: a
        // 200-file package of 60 000 such calls took 15 s in a release build.
        use crate::index::facts::Language::{Go, Protobuf};
        let proto = "syntax = \"proto3\";\npackage shop;\nservice AdService {\n  rpc GetAds(Req) returns (Res);\n}\n";
        let main_go = "package main\n\nfunc main() {\n\tsvc := new(server)\n\tsvc.ads = pb.NewAdServiceClient(conn)\n}\n";
        let body: String = (0..300)
            .map(|i| format!("\ts.log{}.Info(\"x\")\n", i % 7))
            .collect();
        let texts: Vec<(String, String)> = (0..200)
            .map(|f| (format!("f{f}.go"), format!("package main\n\nfunc (s *S) F{f}() {{\n\ts.ads.GetAds(ctx, nil)\n{body}}}\n")))
            .collect();
        let mut files = vec![
            ("shop", "ads.proto", Protobuf, proto),
            ("web", "main.go", Go, main_go),
        ];
        files.extend(
            texts
                .iter()
                .map(|(p, t)| ("web", p.as_str(), Go, t.as_str())),
        );
        let started = std::time::Instant::now();
        let snap = graph_of(&files);
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
        assert_eq!(snap.graph.calls.len(), 200);
        assert!(
            snap.graph
                .calls
                .iter()
                .all(|c| c.label == "ads.GetAds" && c.at.line == 4)
        );
    }

    /// The graph of `files` (root, path, language, text), each extracted the way the indexer does.
    fn graph_of(
        files: &[(&str, &str, crate::index::facts::Language, &str)],
    ) -> crate::index::snapshot::Snapshot {
        crate::index::snapshot::Snapshot::from_facts(
            files
                .iter()
                .map(|(root, path, lang, text)| {
                    (*root, *path, crate::index::lang::extract(*lang, path, text))
                })
                .collect(),
        )
    }

    /// Each event link as (topic, line, how its name was found).
    fn topic_lines(g: &Graph) -> Vec<(&str, u32, &str)> {
        g.events
            .iter()
            .map(|e| {
                (
                    g.topics[e.topic as usize].name.as_str(),
                    e.at.line,
                    e.how.as_str(),
                )
            })
            .collect()
    }

    /// [`topic_lines`] of `g`, asserting there are `count` of them (naming the unresolved sites
    /// when there are not).
    fn topic_lines_counted(g: &Graph, count: usize) -> Vec<(&str, u32, &str)> {
        let found = topic_lines(g);
        assert_eq!(
            found.len(),
            count,
            "{found:?} unresolved {:?}",
            g.unresolved_events
        );
        found
    }

    /// Each call joined to a route as (caller file, line, route path).
    fn joined(g: &Graph) -> Vec<(u32, u32, &str)> {
        g.route_calls
            .iter()
            .map(|c| {
                (
                    c.at.file,
                    c.at.line,
                    g.routes[c.route as usize].path.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn urls_from_config_keys_set_in_code_and_placeholders_in_value_fields_reach_routes() {
        use crate::index::facts::Language::{Java, JavaScript, Python};
        let web = r#"import os
app.config["CART_URI"] = "http://{}/cart".format(os.environ.get("CART_HOST", "cart"))
app.config["PAY_URI"] = f"http://{os.environ.get('PAY_HOST', 'pay')}/pay"
"#;
        let views = r#"from app import app
def show(id):
    requests.get(app.config["CART_URI"] + "/" + id)
    requests.post(f"{app.config['PAY_URI']}/{id}")
"#;
        let ui = r#"package x;
class Carts {
    @Value("http://${CARTS_HOST}/carts")
    private String url;
    String get(String id) { return restTemplate.getForObject(url + "/" + id, String.class); }
}
"#;
        let routes = "app.get('/cart/:id', h);\napp.post('/pay/:id', h);\napp.get('/carts/:id', h);\napp.get('/:id', h);\n";
        let snap = graph_of(&[
            ("web", "web/app.py", Python, web),
            ("web", "web/views.py", Python, views),
            ("ui", "ui/Carts.java", Java, ui),
            ("cart", "cart/server.js", JavaScript, routes),
        ]);
        let g = &snap.graph;
        assert_eq!(
            joined(g),
            vec![
                (1, 3, "/cart/:id"),
                (1, 4, "/pay/:id"),
                (2, 5, "/carts/:id")
            ],
            "unresolved: {:?}",
            g.unresolved_calls
        );
    }

    #[test]
    fn topics_with_env_defaults_resolve_across_files_and_packages() {
        use crate::index::facts::Language::{Go, Kotlin};
        let events = r#"package events

import "os"

func topicName() string {
	if v := os.Getenv("ORDERS_TOPIC"); v != "" {
		return v
	}
	return "orders"
}

var Topic = topicName()
"#;
        let main = r#"package main

import "example.com/shop/events"

func main() {
	w := &kafka.Writer{Topic: events.Topic}
	_ = w
}
"#;
        let kt = r#"package x
class Invoices(private val kafkaTemplate: KafkaTemplate<String, String>) {
    private val topic = System.getenv("INVOICES_TOPIC") ?: "invoices"
    fun publish() { kafkaTemplate.send(topic, "x") }
}
"#;
        let snap = graph_of(&[
            ("shop", "shop/events/events.go", Go, events),
            ("shop", "shop/main.go", Go, main),
            ("billing", "billing/Invoices.kt", Kotlin, kt),
        ]);
        let g = &snap.graph;
        let found = topic_lines_counted(g, 2);
        assert_eq!((found[0].0, found[0].1), ("orders", 6));
        assert!(found[0].2.contains("events.Topic"), "{found:?}");
        assert_eq!((found[1].0, found[1].1), ("invoices", 4));
    }

    #[test]
    fn env_vars_without_a_default_take_the_value_a_deployment_file_sets() {
        use crate::index::facts::Language::{Go, Java, Yaml};
        let producer = r#"package main

import "os"

func main() {
	w := &kafka.Writer{Topic: os.Getenv("ORDERS_TOPIC")}
	_ = w
}
"#;
        let consumer = r#"package acme.billing;
class OrdersListener {
    @KafkaListener(topics = "${billing.orders.topic}")
    public void on(String m) {}
}
"#;
        let shipping = r#"package main

import "os"

func main() {
	w := &kafka.Writer{Topic: os.Getenv("SHIP_TOPIC")}
	_ = w
}
"#;
        let compose = "services:\n  orders:\n    build: ./orders\n    environment:\n      ORDERS_TOPIC: orders.v1\n      SHIP_TOPIC: a\n  billing:\n    image: billing\n    environment:\n      - BILLING_ORDERS_TOPIC=orders.v1\n  other:\n    image: x\n    environment:\n      SHIP_TOPIC: b\n";
        let snap = graph_of(&[
            ("orders", "orders/main.go", Go, producer),
            ("billing", "billing/OrdersListener.java", Java, consumer),
            ("shipping", "shipping/main.go", Go, shipping),
            (".", "docker-compose.yml", Yaml, compose),
        ]);
        let g = &snap.graph;
        let found = topic_lines_counted(g, 2);
        assert!(found.iter().all(|f| f.0 == "orders.v1"), "{found:?}");
        let how: Vec<&str> = found.iter().map(|f| f.2).collect();
        assert!(
            how.contains(&"env ORDERS_TOPIC set for orders at docker-compose.yml:5"),
            "{how:?}"
        );
        assert!(
            how.contains(&"env billing.orders.topic set for billing at docker-compose.yml:10"),
            "{how:?}"
        );
        // SHIP_TOPIC is set for two other services with two values: the shipping service's is
        // unknown, and the site stays listed as unresolved.
        assert_eq!(g.unresolved_events.len(), 1, "{:?}", g.unresolved_events);
    }

    #[test]
    fn spring_cloud_stream_bindings_resolve_through_property_files() {
        use crate::index::facts::Language::{Java, Properties, Yaml};
        let orders = r#"package acme.orders;
class Publisher {
    void send(Order o) { streamBridge.send("orders-out-0", o); }
    void audit(Order o) { streamBridge.send("audit-out-0", o); }
}
"#;
        let yml = "spring:\n  cloud:\n    stream:\n      bindings:\n        orders-out-0:\n          destination: orders.created\n";
        let billing = r#"package acme.billing;
class Handlers {
    @Bean
    public Consumer<Order> orders() { return o -> {}; }
}
"#;
        let props = "spring.cloud.stream.bindings.orders-in-0.destination=orders.created\n";
        // A `Consumer` bean in a service that configures no Spring Cloud Stream is no binding.
        let other = "package acme.other;\nclass C {\n    @Bean\n    public Consumer<String> log() { return s -> {}; }\n}\n";
        let snap = graph_of(&[
            ("orders", "orders/src/Publisher.java", Java, orders),
            (
                "orders",
                "orders/src/main/resources/application.yml",
                Yaml,
                yml,
            ),
            ("billing", "billing/src/Handlers.java", Java, billing),
            (
                "billing",
                "billing/src/main/resources/application.properties",
                Properties,
                props,
            ),
            ("other", "other/src/C.java", Java, other),
        ]);
        let g = &snap.graph;
        let found = topic_lines(g);
        let key = "spring.cloud.stream.bindings";
        assert_eq!(
            found,
            vec![
                (
                    "orders.created",
                    3,
                    format!("config {key}.orders-out-0.destination").as_str()
                ),
                // No destination configured: the binding's own name, and the answer says so.
                (
                    "audit-out-0",
                    4,
                    format!("config {key}.audit-out-0.destination unset, default").as_str()
                ),
                (
                    "orders.created",
                    4,
                    format!("config {key}.orders-in-0.destination").as_str()
                ),
            ],
            "unresolved {:?}",
            g.unresolved_events
        );
        assert!(g.unresolved_events.is_empty(), "{:?}", g.unresolved_events);
    }

    #[test]
    fn health_checks_of_deployment_files_call_their_own_service() {
        use crate::index::facts::Language::{Go, JavaScript, Yaml};
        let go = "package main\n\nfunc main() {\n\thttp.HandleFunc(\"/health\", health)\n}\n";
        let js = "const app = express();\napp.get('/health', (req, res) => res.send('ok'));\n";
        let compose = "services:\n  shipping:\n    image: s\n    healthcheck:\n      test: [\"CMD\", \"curl\", \"-f\", \"http://localhost:8080/health\"]\n";
        let chart = "kind: Deployment\nmetadata:\n  name: '{{ .Release.Name }}'\nspec:\n  template:\n    spec:\n      containers:\n        - name: '{{ .Chart.Name }}'\n          readinessProbe:\n            httpGet:\n              path: /health\n              port: 8080\n";
        let snap = graph_of(&[
            ("shipping", "shipping/main.go", Go, go),
            ("cart", "cart/server.js", JavaScript, js),
            ("cart", "cart/chart/deployment.yaml", Yaml, chart),
            (".", "docker-compose.yaml", Yaml, compose),
        ]);
        let g = &snap.graph;
        let got: Vec<(&str, u32, &str)> = g
            .route_calls
            .iter()
            .map(|c| {
                let route = &g.routes[c.route as usize];
                (
                    snap.files[route.at.file as usize].path.as_ref(),
                    c.at.line,
                    snap.files[c.at.file as usize].path.as_ref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("cart/server.js", 11, "cart/chart/deployment.yaml"),
                ("shipping/main.go", 5, "docker-compose.yaml"),
            ],
            "{:?}",
            g.route_calls
        );
    }

    #[test]
    fn an_amqp_exchange_links_a_python_publisher_to_a_go_binder() {
        use crate::index::facts::Language;
        let py = "import pika\nimport os\n\nclass Publisher:\n    EXCHANGE = os.getenv('EXCHANGE', 'robot-shop')\n    DEFAULT = ''\n\n    def publish(self, key, msg):\n        self._channel.basic_publish(exchange=self.EXCHANGE, routing_key='orders', body=msg)\n        self._channel.basic_publish(exchange=self.DEFAULT, routing_key='jobs', body=msg)\n        self._channel.basic_publish(exchange=key, routing_key='audit', body=msg)\n";
        let go = "package main\nimport \"github.com/streadway/amqp\"\nvar ch *amqp.Channel\nfunc setup() {\n\tq, _ := ch.QueueDeclare(\"orders\", true, false, false, false, nil)\n\tch.QueueBind(q.Name, \"orders\", \"robot-shop\", false, nil)\n\tch.Consume(\"orders\", \"\", true, false, false, false, nil)\n}\n";
        let snap = graph_of(&[
            ("payment", "payment/rabbitmq.py", Language::Python, py),
            ("dispatch", "dispatch/main.go", Language::Go, go),
        ]);
        let g = &snap.graph;
        let mut links: Vec<(&str, EventRole, &str, u32, &str)> = g
            .events
            .iter()
            .map(|e| {
                (
                    g.topics[e.topic as usize].name.as_str(),
                    e.role,
                    &*snap.files[e.at.file as usize].path,
                    e.at.line,
                    e.via.as_str(),
                )
            })
            .collect();
        links.sort_by(|a, b| (a.0, a.2, a.3).cmp(&(b.0, b.2, b.3)));
        let ex = crate::index::lang::common::AMQP_EXCHANGE_VIA;
        assert_eq!(
            links,
            vec![
                (
                    "audit",
                    EventRole::Producer,
                    "payment/rabbitmq.py",
                    11,
                    "amqp"
                ),
                (
                    "jobs",
                    EventRole::Producer,
                    "payment/rabbitmq.py",
                    10,
                    "amqp"
                ),
                ("orders", EventRole::Consumer, "dispatch/main.go", 7, "amqp"),
                (
                    "orders",
                    EventRole::Producer,
                    "payment/rabbitmq.py",
                    9,
                    "amqp"
                ),
                ("robot-shop", EventRole::Consumer, "dispatch/main.go", 6, ex),
                (
                    "robot-shop",
                    EventRole::Producer,
                    "payment/rabbitmq.py",
                    9,
                    ex
                ),
            ]
        );
        let shop = g
            .events
            .iter()
            .find(|e| e.via == ex && e.role == EventRole::Producer);
        assert!(shop.is_some_and(|e| e.how.contains("EXCHANGE")), "{shop:?}");
        // The default exchange (a constant `''`) and a run-time exchange beside a known
        // routing key are no unresolved sites.
        assert!(g.unresolved_events.is_empty(), "{:?}", g.unresolved_events);
    }

    #[test]
    fn requests_of_helpers_whose_url_is_a_parameter_are_made_at_each_call_site() {
        use crate::index::facts::Language::{Go, JavaScript, Python, TypeScript};
        let server = "package main\n\nimport \"net/http\"\n\nfunc main() {\n\thttp.HandleFunc(\"/tags\", tags)\n\thttp.HandleFunc(\"/orders\", orders)\n}\n";
        let helpers = "var request = require('request');\nvar helpers = {};\nhelpers.simpleHttpRequest = function (url, res, next) {\n  request.get(url, function (e, r, body) { res.send(body); });\n};\nmodule.exports = helpers;\n";
        let endpoints = "module.exports = { tagsUrl: 'http://catalogue/tags' };\n";
        let api = "var helpers = require('../helpers');\nvar endpoints = require('./endpoints');\napp.get('/x', function (req, res, next) {\n  helpers.simpleHttpRequest(endpoints.tagsUrl, res, next);\n});\n";
        let ts_api = "const BASE = process.env.CATALOGUE_URL ?? 'http://catalogue';\nexport async function getJson<T>(path: string): Promise<T> {\n  const res = await fetch(`${BASE}${path}`);\n  return res.json();\n}\n";
        let ts_page = "import { getJson } from './api';\nexport async function load() {\n  return getJson('/orders');\n}\n";
        let py = "import requests\n\nclass Client:\n    def __init__(self, base='http://catalogue'):\n        self.base = base\n\n    def _get(self, path):\n        return requests.get(self.base + path)\n\n    def tags(self):\n        return self._get('/tags')\n";
        // Another root calls a function of the same name it does not import: not a caller.
        let stranger = "function run() {\n  simpleHttpRequest('http://catalogue/orders');\n}\n";
        let snap = graph_of(&[
            ("catalogue", "main.go", Go, server),
            ("front", "helpers/index.js", JavaScript, helpers),
            ("front", "api/endpoints.js", JavaScript, endpoints),
            ("front", "api/index.js", JavaScript, api),
            ("web", "api.ts", TypeScript, ts_api),
            ("web", "page.ts", TypeScript, ts_page),
            ("py", "client.py", Python, py),
            ("other", "run.js", JavaScript, stranger),
        ]);
        let path = |f: u32| snap.files[f as usize].path.to_string();
        let mut got: Vec<(String, u32, String)> = joined(&snap.graph)
            .into_iter()
            .map(|(f, l, r)| (path(f), l, r.to_string()))
            .collect();
        got.sort();
        let row = |f: &str, l: u32, r: &str| (f.to_string(), l, r.to_string());
        assert_eq!(
            got,
            vec![
                row("api/index.js", 4, "/tags"),
                row("client.py", 11, "/tags"),
                row("page.ts", 3, "/orders"),
            ]
        );
        // The helpers' own lines are no callers, and no site is left unresolved.
        assert!(
            snap.graph.unresolved_calls.is_empty(),
            "{:?}",
            snap.graph.unresolved_calls
        );
    }

    #[test]
    fn unrelated_call_sites_of_a_helpers_name_do_not_use_up_its_bound() {
        use crate::index::facts::Language::{Go, JavaScript};
        let server = "package main\n\nimport \"net/http\"\n\nfunc main() {\n\thttp.HandleFunc(\"/tags\", tags)\n}\n";
        let helpers = "var request = require('request');\nvar helpers = {};\nhelpers.simpleHttpRequest = function (url, res) {\n  request.get(url);\n};\nmodule.exports = helpers;\n";
        let caller = "var helpers = require('../helpers');\nhelpers.simpleHttpRequest('http://catalogue/tags', res);\n";
        let stranger: String = (0..100)
            .map(|_| "simpleHttpRequest('http://catalogue/tags');\n")
            .collect();
        let snap = graph_of(&[
            ("aaa", "run.js", JavaScript, &stranger),
            ("catalogue", "main.go", Go, server),
            ("front", "helpers/index.js", JavaScript, helpers),
            ("front", "api/index.js", JavaScript, caller),
        ]);
        let path = |f: u32| snap.files[f as usize].path.to_string();
        let got: Vec<(String, u32)> = joined(&snap.graph)
            .into_iter()
            .map(|(f, l, _)| (path(f), l))
            .collect();
        assert_eq!(got, vec![("api/index.js".to_string(), 2)]);
    }
}
