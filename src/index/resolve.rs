//! Values to text, once for every language: the names in a [`Value`] — references to bindings
//! of the same file, the same package, or a module the file imports; configuration keys; and
//! environment defaults — are looked up across the snapshot, so a topic written
//! `events.Topic` or a URL written `base + "/cart/" + id` resolves however it was spelled.
//!
//! Resolution never invents text: a part it cannot resolve stays a hole, with a note saying
//! what it was, so the caller can list the site as unresolved instead of guessing.

use std::collections::HashMap;
use std::sync::Arc;

use super::facts::{Language, Part, Value};
use super::graph::Confidence;
use super::modules::{import_path_keys, path_key};
use super::snapshot::FileEntry;

/// How deep references are followed (`A = B + "/x"`, `B = env(...)`): cycles stop here.
const MAX_DEPTH: u8 = 6;

/// A value after resolution: literal text where it could be read, holes where it could not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub segs: Vec<Seg>,
    /// The first hop as an answer shows it: `literal`, `constant Topics.ORDER_CREATED`,
    /// `env ORDERS_TOPIC default`, `config retail.ui.endpoints.catalog`.
    pub how: String,
    /// Where the names were bound, in the order they were followed (`path:line` evidence).
    pub chain: Vec<(u32, u32, String)>,
    /// Exact when every name had one definition; heuristic when a name was matched by its
    /// last segment or across packages of the root.
    pub confidence: Confidence,
}

/// One piece of a [`Resolved`] value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Lit(String),
    /// Text the index cannot know. `name` is the variable, env var or config key it came from
    /// (a service is often named by it: `CATALOGUE_HOST`), or `None` for a run-time value.
    Hole {
        name: Option<String>,
        kind: HoleKind,
    },
}

impl Seg {
    /// A hole of `kind` for the name `name` (`None` for a run-time value).
    pub fn hole(name: Option<&str>, kind: HoleKind) -> Seg {
        Seg::Hole {
            name: name.map(str::to_string),
            kind,
        }
    }
}

/// What a [`Seg::Hole`] was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoleKind {
    /// An environment variable without a default in the code.
    Env,
    /// A configuration key not found in the workspace's property files.
    Config,
    /// A name with no binding the index could find.
    Name,
    /// A run-time value (a parameter, a call result).
    Dynamic,
}

impl Resolved {
    /// The value `segs`, exact, with no hop followed yet.
    pub fn exact(segs: Vec<Seg>) -> Resolved {
        Resolved {
            segs,
            how: String::new(),
            chain: Vec::new(),
            confidence: Confidence::Exact,
        }
    }

    /// The text when every part resolved.
    pub fn text(&self) -> Option<String> {
        let mut out = String::new();
        for s in &self.segs {
            match s {
                Seg::Lit(t) => out.push_str(t),
                Seg::Hole { .. } => return None,
            }
        }
        Some(out)
    }

    /// Why the value did not resolve (for an "unresolved" row): the first hole, described.
    pub fn why_unresolved(&self) -> Option<String> {
        self.segs.iter().find_map(|s| match s {
            Seg::Lit(_) => None,
            Seg::Hole { name, kind } => Some(match (kind, name) {
                // A Spring placeholder (`${retail.orders.topic}`) is a property, not a variable.
                (HoleKind::Env, Some(n)) if n.contains('.') => {
                    format!(
                        "property {n} has no value in the workspace's property or deployment files (empty or unset) and no default in the code"
                    )
                }
                (HoleKind::Env, Some(n)) => format!(
                    "env {n} has no default in the code and no deployment file sets it"
                ),
                (HoleKind::Config, Some(n)) => {
                    format!("config key {n} is not set in the workspace's property files")
                }
                (HoleKind::Name, Some(n)) => match run_time_owner(n) {
                    Some(owner) => format!(
                        "no definition of {n} was found; `{owner}` may be a run-time value (a parameter, a database row, a settings object)"
                    ),
                    None => format!("no definition of {n} was found"),
                },
                (_, Some(n)) => match crate::index::lang::bind::describe_call_arg(n) {
                    Some(arg) => format!(
                        "the URL is {arg}, and no call of it the index found passes one it can read"
                    ),
                    None => format!("{n} is only known at run time"),
                },
                (_, None) => "built at run time".to_string(),
            }),
        })
    }
}

/// The variable a dotted name may be a member of, when it reads like one rather than like a
/// type holding constants: `subs.DestUrl` → `subs`, `_options.BaseUrl` → `_options`; not
/// `Topics.ORDERS`, `this.baseUrl` or a name without a dot. (A lower-case module, Go's
/// `config.URL`, reads the same: the reason says "may be".)
fn run_time_owner(name: &str) -> Option<&str> {
    let (head, rest) = name.split_once('.')?;
    let first = head.chars().next()?;
    let variable = (first.is_lowercase() || first == '_')
        && !matches!(head, "this" | "self" | "@" | "super" | "base")
        && !rest.is_empty();
    variable.then_some(head)
}

/// Top-level names of one scope: name → (file, binding index) for each definition.
type ScopeNames<'a> = HashMap<&'a str, Vec<(u32, u32)>>;

/// The lookup tables of one snapshot.
pub struct Resolver<'a> {
    files: &'a [Arc<FileEntry>],
    /// Workspace path of each file.
    paths: Vec<String>,
    /// (root, package or directory) → name → (file, binding index).
    by_scope: HashMap<(u16, String), ScopeNames<'a>>,
    /// Files by extension-less workspace path ([`path_key`]).
    by_key: HashMap<String, Vec<u32>>,
    /// Files by the last segment of their package or directory (Go `events`, Java `config`).
    by_pkg_tail: HashMap<String, Vec<u32>>,
    /// root → normalised configuration key → (file, line, value).
    props: HashMap<u16, HashMap<String, (u32, u32, &'a str)>>,
    /// [`env_key`] of a variable → where deployment files set it, in path order.
    deployed: HashMap<String, Vec<DeployedValue<'a>>>,
}

/// A value a deployment file (compose, Kubernetes) gives an environment variable.
struct DeployedValue<'a> {
    file: u32,
    line: u32,
    value: &'a str,
    service: &'a str,
    /// The source root the value is set for, when the build context, the service's name or
    /// the file's own root says which.
    root: Option<u16>,
}

/// The name under which an environment variable and a configuration key meet: Spring binds
/// `RETAIL_ORDERS_TOPIC` to `retail.orders.topic` and .NET `Kafka__Topic` to `Kafka:Topic`,
/// so case, `_`, `-`, `.` and `:` are ignored.
fn env_key(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ':'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The root a deployment setting in the file at `path` (workspace path, of root `own`) is for:
/// the root holding its build context, else the root its service is named after, else the
/// file's own root when that is a service's (not the workspace's top level).
fn deployed_root(
    path: &str,
    own: u16,
    service: &str,
    context: Option<&str>,
    labels: &[String],
    names: &[String],
) -> Option<u16> {
    if let Some(ctx) = context {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let mut parts: Vec<&str> = if ctx.starts_with('/') {
            Vec::new()
        } else {
            dir.split('/').filter(|p| !p.is_empty()).collect()
        };
        for p in ctx.split('/') {
            match p {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        let joined = parts.join("/");
        let within = labels
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                l.as_str() != "." && (joined == **l || joined.starts_with(&format!("{l}/")))
            })
            .max_by_key(|(_, l)| l.len());
        if let Some((i, _)) = within {
            return Some(i as u16);
        }
    }
    if let Some(r) = super::graph::root_named(service, names) {
        return Some(r);
    }
    labels
        .get(own as usize)
        .is_some_and(|l| l != ".")
        .then_some(own)
}

/// The scope a file's top-level names live in: its package when it declares one, else its
/// directory.
pub fn scope_of(f: &FileEntry) -> (u16, String) {
    let dir = f
        .path
        .rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_string());
    let scope = match f.lang {
        // Go packages are directories: two `package main` directories are two scopes.
        Language::Go | Language::Python | Language::JavaScript | Language::TypeScript => dir,
        _ => f.facts().package.clone().unwrap_or(dir),
    };
    (f.root, scope)
}

/// Configuration keys compare relaxed, the way Spring binds them: case, `-` and `_` ignored.
pub fn config_key(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

impl<'a> Resolver<'a> {
    /// Indexes the bindings, module paths and configuration keys of `files`.
    pub fn new(files: &'a [Arc<FileEntry>], paths: Vec<String>) -> Resolver<'a> {
        let mut by_scope: HashMap<(u16, String), ScopeNames<'a>> = HashMap::new();
        let mut by_key: HashMap<String, Vec<u32>> = HashMap::new();
        let mut by_pkg_tail: HashMap<String, Vec<u32>> = HashMap::new();
        let mut props: HashMap<u16, HashMap<String, (u32, u32, &'a str)>> = HashMap::new();
        let mut deployed: HashMap<String, Vec<DeployedValue<'a>>> = HashMap::new();
        let mut labels: Vec<String> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for (fi, f) in files.iter().enumerate() {
            if !f.facts().env_settings.is_empty() && labels.is_empty() {
                labels = super::graph::root_labels(files, &paths);
                names = labels
                    .iter()
                    .map(|l| super::graph::service_name(l))
                    .collect();
            }
            for s in &f.facts().env_settings {
                let root = deployed_root(
                    &paths[fi],
                    f.root,
                    &s.service,
                    s.context.as_deref(),
                    &labels,
                    &names,
                );
                deployed
                    .entry(env_key(&s.var))
                    .or_default()
                    .push(DeployedValue {
                        file: fi as u32,
                        line: s.line,
                        value: &s.value,
                        service: &s.service,
                        root,
                    });
            }
            let facts = f.facts();
            if !facts.bindings.is_empty() {
                let scope = by_scope.entry(scope_of(f)).or_default();
                for (bi, b) in facts.bindings.iter().enumerate() {
                    scope
                        .entry(b.name.as_str())
                        .or_default()
                        .push((fi as u32, bi as u32));
                }
                let (_, s) = scope_of(f);
                let tail = s.rsplit(['/', '.', '\\']).next().unwrap_or(&s).to_string();
                by_pkg_tail.entry(tail).or_default().push(fi as u32);
            }
            by_key
                .entry(path_key(&paths[fi]))
                .or_default()
                .push(fi as u32);
            for p in &facts.properties {
                props
                    .entry(f.root)
                    .or_default()
                    .entry(config_key(&p.key))
                    .or_insert((fi as u32, p.line, p.value.as_str()));
            }
        }
        Resolver {
            files,
            paths,
            by_scope,
            by_key,
            by_pkg_tail,
            props,
            deployed,
        }
    }

    /// The value deployment files give variable (or configuration key) `name` for the
    /// service of file `fi`: one set for its root, else one value every file agrees on.
    /// Returns the setting and whether it was matched to the root.
    fn deployed_value(&self, fi: u32, name: &str) -> Option<(&DeployedValue<'a>, bool)> {
        let all = self.deployed.get(&env_key(name))?;
        let root = self.files[fi as usize].root;
        if let Some(d) = all.iter().find(|d| d.root == Some(root)) {
            return Some((d, true));
        }
        let first = all.first()?;
        all.iter()
            .all(|d| d.value == first.value)
            .then_some((first, false))
    }

    /// Follows a deployment setting of `name` into `out`; false when there is none.
    /// Resolves `key` from a property file of file `fi`'s root (`application.yml`,
    /// `application.properties`, …) into `out`, following its own placeholders; false when
    /// no property file of the root sets it to a non-empty value. `kind` labels the chain
    /// (`env`, `config`).
    fn push_property(&self, fi: u32, key: &str, kind: &str, depth: u8, out: &mut Resolved) -> bool {
        let root = self.files[fi as usize].root;
        match self.props.get(&root).and_then(|m| m.get(&config_key(key))) {
            Some(&(pf, line, v)) if depth < MAX_DEPTH && !v.is_empty() => {
                out.chain.push((pf, line, format!("{kind} {key}")));
                let parsed = parse_placeholders(v);
                self.resolve_into(pf, &parsed, depth + 1, out);
                true
            }
            _ => false,
        }
    }

    fn push_deployed(
        &self,
        fi: u32,
        name: &str,
        what: &str,
        depth: u8,
        out: &mut Resolved,
    ) -> bool {
        let Some((d, for_root)) = self.deployed_value(fi, name) else {
            return false;
        };
        if depth >= MAX_DEPTH {
            return false;
        }
        // The evidence travels in `how`, which every answer shows.
        let at = format!("{}:{}", self.path(d.file), d.line);
        let set = if d.service.is_empty() {
            format!("{what} {name} set at {at}")
        } else {
            format!("{what} {name} set for {} at {at}", d.service)
        };
        if out.how == format!("{what} {name}") || out.how.is_empty() {
            out.how = set.clone();
        } else {
            out.how.push_str("; ");
            out.how.push_str(&set);
        }
        out.chain.push((d.file, d.line, set));
        if !for_root && out.confidence < Confidence::Heuristic {
            out.confidence = Confidence::Heuristic;
        }
        // The value may itself hold `${…}` placeholders for Spring to expand.
        self.resolve_into(d.file, &parse_placeholders(d.value), depth + 1, out);
        true
    }

    /// The workspace files a name used in file `fi` was imported from: `users` bound by
    /// `import users from './routes/users'` or `from routers import users`, the module of
    /// `items.router`, or a relative specifier itself (`./routes/users`). Empty when the
    /// name is not imported from a workspace file.
    pub fn module_files(&self, fi: u32, name: &str) -> Vec<u32> {
        let f = &self.files[fi as usize];
        let python = f.lang == Language::Python;
        let keys_of = |module: &str| import_path_keys(self.path(fi), module, python);
        let mut keys = Vec::new();
        if name.starts_with("./") || name.starts_with("../") {
            keys = keys_of(name);
        } else {
            let head = name.split('.').next().unwrap_or(name);
            for imp in &f.facts().imports {
                if let Some(imported) = imp.imported_as(head) {
                    keys.extend(keys_of(&imp.module));
                    // `from routers import items`: `items` is a module of the package.
                    keys.extend(keys_of(&format!("{}/{imported}", imp.module)));
                } else if imp.alias.as_deref() == Some(head)
                    || (imp.alias.is_none()
                        && imp.names.is_empty()
                        && imp.module.rsplit(['/', '.', '\\']).next() == Some(head))
                {
                    keys.extend(keys_of(&imp.module));
                }
            }
        }
        // A Python module named by its dotted path (Django's `include("shop.api_urls")`).
        if keys.is_empty() && python && !name.contains('/') {
            keys = keys_of(name);
        }
        let mut out: Vec<u32> = keys
            .iter()
            .flat_map(|k| self.by_key.get(k).into_iter().flatten().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The workspace path of file `fi`.
    pub fn path(&self, fi: u32) -> &str {
        &self.paths[fi as usize]
    }

    /// True when a property file of file `fi`'s root sets any key under `prefix` (compared
    /// relaxed, as [`config_key`]): whether the service configures a framework at all.
    pub fn root_configures(&self, fi: u32, prefix: &str) -> bool {
        let want = config_key(prefix);
        let root = self.files[fi as usize].root;
        self.props
            .get(&root)
            .is_some_and(|m| m.keys().any(|k| k.starts_with(&want)))
    }

    /// Resolves `value` as seen from file `fi`.
    pub fn resolve(&self, fi: u32, value: &Value) -> Resolved {
        let mut out = Resolved::exact(Vec::new());
        self.resolve_into(fi, value, 0, &mut out);
        if out.how.is_empty() {
            out.how = "literal".to_string();
        }
        // Adjacent literals read as one.
        let mut merged: Vec<Seg> = Vec::with_capacity(out.segs.len());
        for s in out.segs.drain(..) {
            match (merged.last_mut(), s) {
                (Some(Seg::Lit(a)), Seg::Lit(b)) => a.push_str(&b),
                (_, s) => merged.push(s),
            }
        }
        out.segs = merged;
        out
    }

    fn resolve_into(&self, fi: u32, value: &Value, depth: u8, out: &mut Resolved) {
        let first = depth == 0 && value.parts.len() == 1;
        for part in &value.parts {
            match part {
                Part::Lit(s) => out.segs.push(Seg::Lit(s.clone())),
                Part::Dynamic => out.segs.push(Seg::hole(None, HoleKind::Dynamic)),
                Part::Env { var, default } => {
                    if first {
                        out.how = match default {
                            Some(_) => format!("env {var} default"),
                            None => format!("env {var}"),
                        };
                    }
                    match default {
                        Some(d) => out.segs.push(Seg::Lit(d.clone())),
                        // Spring reads `${app.topics.orders}` from the environment and from the
                        // service's property files alike (relaxed binding).
                        None if self.push_property(fi, var, "property", depth, out) => {
                            if first {
                                out.how = format!("property {var}");
                            }
                        }
                        None if self.push_deployed(fi, var, "env", depth, out) => {}
                        None => out.segs.push(Seg::hole(Some(var.as_str()), HoleKind::Env)),
                    }
                }
                Part::Config { key, default } => {
                    if first {
                        out.how = format!("config {key}");
                    }
                    if self.push_property(fi, key, "config", depth, out) {
                        continue;
                    }
                    match default {
                        Some(d) => {
                            // The fallback shows: no property file of the root sets the key.
                            if first {
                                out.how = format!("config {key} unset, default");
                            }
                            out.segs.push(Seg::Lit(d.clone()))
                        }
                        None if self.push_deployed(fi, key, "config", depth, out) => {}
                        None => out
                            .segs
                            .push(Seg::hole(Some(key.as_str()), HoleKind::Config)),
                    }
                }
                Part::Ref { name, default } => {
                    if first {
                        out.how = match name.strip_prefix("new ").and_then(|n| n.split_once('#')) {
                            Some((class, i)) => format!("argument #{i} of new {class}(…)"),
                            None => format!("constant {name}"),
                        };
                    }
                    // What each caller of a function passes: read at every call site by
                    // the graph (one value here would be one caller's).
                    if name.starts_with("call ") {
                        out.segs
                            .push(Seg::hole(Some(name.as_str()), HoleKind::Dynamic));
                        continue;
                    }
                    match self.lookup(fi, name) {
                        Some((bf, bi, conf)) if depth < MAX_DEPTH => {
                            let b = &self.files[bf as usize].facts().bindings[bi as usize];
                            out.chain.push((bf, b.line, name.clone()));
                            if conf > out.confidence {
                                out.confidence = conf;
                            }
                            self.resolve_into(bf, &b.value, depth + 1, out);
                        }
                        _ => match default {
                            Some(d) => out.segs.push(Seg::Lit(d.clone())),
                            // A constructor argument no single `new Class(…)` gives: run-time.
                            None if name.starts_with("new ") => {
                                out.segs.push(Seg::hole(None, HoleKind::Dynamic))
                            }
                            None => out
                                .segs
                                .push(Seg::hole(Some(name.as_str()), HoleKind::Name)),
                        },
                    }
                }
            }
        }
    }

    /// The binding a name written in file `fi` refers to: the file itself, its package or
    /// directory, an imported module (`events.Topic` with `events` imported, `BASE` imported
    /// by name), then — heuristically — a unique definition in the same root.
    fn lookup(&self, fi: u32, name: &str) -> Option<(u32, u32, Confidence)> {
        let f = &self.files[fi as usize];
        let here = |file: u32, n: &str| -> Option<u32> {
            let bindings = &self.files[file as usize].facts().bindings;
            if let Some(i) = bindings.iter().rposition(|b| b.name == n) {
                return Some(i as u32);
            }
            // `this.base`, `self.URL` or a bare `base` inside a class name a member:
            // `Client.base` in the same file.
            let bare = ["this.", "self.", "$this.", "cls."]
                .iter()
                .find_map(|p| n.strip_prefix(p))
                .unwrap_or(n);
            let mut hits = bindings.iter().enumerate().filter(|(_, b)| {
                b.name.len() > bare.len()
                    && b.name.ends_with(bare)
                    && b.name[..b.name.len() - bare.len()].ends_with('.')
            });
            let (i, _) = hits.next()?;
            hits.next().is_none().then_some(i as u32)
        };
        if let Some(bi) = here(fi, name) {
            return Some((fi, bi, Confidence::Exact));
        }
        let last = name.rsplit(['.', ':']).next().unwrap_or(name);
        let scope = self.by_scope.get(&scope_of(f));
        if let Some(scope) = scope {
            for candidate in [name, last] {
                if let Some(list) = scope.get(candidate)
                    && let [(bf, bi)] = list.as_slice()
                {
                    return Some((*bf, *bi, Confidence::Exact));
                }
            }
        }
        // Through an import: `alias.Name` / `pkg.Name`, or a name imported from a module.
        let (head, tail) = match name.split_once('.') {
            Some((h, t)) => (
                Some(h.trim_start_matches("self").trim_start_matches('.')),
                t,
            ),
            None => (None, name),
        };
        let python = f.lang == Language::Python;
        for imp in &f.facts().imports {
            let alias = imp
                .alias
                .as_deref()
                .unwrap_or_else(|| imp.module.rsplit(['/', '.', '\\']).next().unwrap_or(""));
            let bound_head = head.and_then(|h| imp.imported_as(h));
            let wanted: Option<&str> = match head {
                Some(h) if h == alias => Some(tail),
                Some(_) if bound_head.is_some() => Some(tail),
                // `import { BASE as API }`: `API` is the module's `BASE`.
                None => imp.imported_as(name),
                _ => None,
            };
            let Some(wanted) = wanted else { continue };
            // A module that is a file of the workspace.
            let mut targets: Vec<u32> = import_path_keys(self.path(fi), &imp.module, python)
                .iter()
                .flat_map(|k| self.by_key.get(k).into_iter().flatten().copied())
                .collect();
            // `import x from "./config"` where x is an object of the module: `x.BASE`.
            if let Some(imported) = bound_head {
                targets.extend(
                    import_path_keys(self.path(fi), &format!("{}/{imported}", imp.module), python)
                        .iter()
                        .flat_map(|k| self.by_key.get(k).into_iter().flatten().copied()),
                );
            }
            // A package by its last segment (Go import paths, JVM packages).
            if targets.is_empty() {
                let tail_seg = imp.module.rsplit(['/', '.', '\\']).next().unwrap_or("");
                targets.extend(
                    self.by_pkg_tail
                        .get(tail_seg)
                        .into_iter()
                        .flatten()
                        .copied()
                        .filter(|&t| self.files[t as usize].root == f.root || head.is_some()),
                );
            }
            for t in targets {
                if let Some(bi) = here(t, wanted) {
                    return Some((t, bi, Confidence::Exact));
                }
            }
        }
        // Same root, any package: a unique definition of the qualified name, else of its
        // last segment when it is not a common word.
        let in_root = |wanted: &str| -> Vec<(u32, u32)> {
            self.by_scope
                .iter()
                .filter(|((root, _), _)| *root == f.root)
                .filter_map(|(_, m)| m.get(wanted))
                .flatten()
                .copied()
                .collect()
        };
        let mut found = in_root(name);
        if found.is_empty() && name.contains('.') && last.len() >= 4 {
            found = in_root(last);
        }
        crate::order::sort(&mut found);
        found.dedup();
        match found.as_slice() {
            [(bf, bi)] => Some((*bf, *bi, Confidence::Heuristic)),
            _ => None,
        }
    }
}

/// A configuration value with `${NAME}` / `${NAME:default}` placeholders as a [`Value`]:
/// upper-case names read the environment (Spring's relaxed binding and Docker-style
/// substitution), dotted names other keys. A default may itself be a placeholder
/// (`${a:${B:x}}`): the innermost literal default is the default.
pub fn parse_placeholders(v: &str) -> Value {
    parse_placeholders_within(v, 0)
}

/// How deep [`parse_placeholders`] follows placeholders nested in defaults.
const MAX_NESTED_DEFAULTS: u8 = 8;

fn parse_placeholders_within(v: &str, depth: u8) -> Value {
    let mut out = Value::default();
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push(Part::Lit(rest[..i].to_string()));
        let after = &rest[i + 2..];
        // The `}` closing this placeholder, past those of placeholders nested in it.
        let mut open = 0usize;
        let mut end = None;
        let bytes = after.as_bytes();
        for (k, &b) in bytes.iter().enumerate() {
            if b == b'$' && bytes.get(k + 1) == Some(&b'{') {
                open += 1;
            } else if b == b'}' {
                if open == 0 {
                    end = Some(k);
                    break;
                }
                open -= 1;
            }
        }
        let Some(end) = end else {
            out.push(Part::Lit(rest[i..].to_string()));
            rest = "";
            break;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(':') {
            Some((n, d)) => (n.trim(), Some(d.trim_start_matches('-'))),
            None => (inner.trim(), None),
        };
        let default = default.and_then(|d| {
            if !d.contains("${") {
                return Some(d.to_string());
            }
            if depth >= MAX_NESTED_DEFAULTS {
                return None;
            }
            match parse_placeholders_within(d, depth + 1).parts.as_slice() {
                [Part::Env { default, .. } | Part::Config { default, .. }] => default.clone(),
                _ => None,
            }
        });
        if name.contains('.') || name.chars().any(|c| c.is_ascii_lowercase()) {
            out.push(Part::Config {
                key: name.to_string(),
                default,
            });
        } else {
            out.push(Part::Env {
                var: name.to_string(),
                default,
            });
        }
        rest = &after[end + 1..];
    }
    out.push(Part::Lit(rest.to_string()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::{Binding, FileFacts, Import, Property};
    use crate::index::snapshot::Snapshot;

    #[test]
    fn a_member_of_a_variable_is_said_to_be_a_run_time_value() {
        assert_eq!(run_time_owner("subs.DestUrl"), Some("subs"));
        assert_eq!(run_time_owner("_options.Hooks.Url"), Some("_options"));
        assert_eq!(run_time_owner("über.Ziel"), Some("über"));
        for no in [
            "Topics.ORDERS",
            "this.baseUrl",
            "self.url",
            "url",
            "subs.",
            ".x",
            "",
        ] {
            assert_eq!(run_time_owner(no), None, "{no}");
        }
        let hole = |n: &str| Resolved::exact(vec![Seg::hole(Some(n), HoleKind::Name)]);
        let why = hole("subs.DestUrl").why_unresolved().unwrap_or_default();
        assert!(why.contains("`subs` may be a run-time value"), "{why}");
        let why = hole("Urls.HOOK").why_unresolved().unwrap_or_default();
        assert_eq!(why, "no definition of Urls.HOOK was found");
    }

    fn bind(name: &str, value: Value, line: u32) -> Binding {
        Binding {
            name: name.into(),
            value,
            line,
        }
    }

    fn resolve_in(snap: &Snapshot, file: &str, v: &Value) -> Resolved {
        let paths: Vec<String> = snap.files.iter().map(|f| snap.display_path(f)).collect();
        let fi = paths.iter().position(|p| p == file).expect("file") as u32;
        Resolver::new(&snap.files, paths).resolve(fi, v)
    }

    #[test]
    fn references_follow_files_packages_and_imports() {
        let mut events = FileFacts {
            package: Some("events".into()),
            ..FileFacts::default()
        };
        events.bindings.push(bind(
            "Topic",
            Value::env("INVOICES_TOPIC", Some("invoices".into())),
            7,
        ));
        let mut main = FileFacts::default();
        main.imports.push(Import::whole_module(
            "github.com/acme/billing/events".into(),
            None,
            3,
        ));
        main.bindings
            .push(bind("base", Value::lit("http://cart:8080"), 2));
        let snap = Snapshot::from_facts(vec![
            ("svc", "events/topic.go", events),
            ("svc", "cmd/main.go", main),
        ]);
        let r = resolve_in(&snap, "svc/cmd/main.go", &Value::reference("events.Topic"));
        assert_eq!(r.text().as_deref(), Some("invoices"));
        assert_eq!(r.how, "constant events.Topic");
        assert_eq!(r.confidence, Confidence::Exact);
        let mut url = Value::reference("base");
        url.push(Part::Lit("/cart/".into()));
        url.push(Part::Dynamic);
        let r = resolve_in(&snap, "svc/cmd/main.go", &url);
        assert_eq!(
            r.segs,
            vec![
                Seg::Lit("http://cart:8080/cart/".into()),
                Seg::hole(None, HoleKind::Dynamic)
            ]
        );
        let r = resolve_in(&snap, "svc/cmd/main.go", &Value::reference("nowhere"));
        assert_eq!(r.text(), None);
        assert!(r.why_unresolved().unwrap().contains("nowhere"));
    }

    #[test]
    fn constants_imported_under_another_name_resolve() {
        use crate::index::facts::Language;
        use crate::index::lang::extract;
        let ts = |p: &str, t: &str| extract(Language::TypeScript, p, t);
        let py = |p: &str, t: &str| extract(Language::Python, p, t);
        let snap = Snapshot::from_facts(vec![
            (
                "web",
                "src/config.ts",
                ts(
                    "src/config.ts",
                    "export const BASE = 'http://orders:8080';\n",
                ),
            ),
            (
                "web",
                "src/app.ts",
                ts("src/app.ts", "import { BASE as API } from './config';\n"),
            ),
            (
                "pay",
                "settings.py",
                py("settings.py", "USER_URL = 'http://user:8080'\n"),
            ),
            (
                "pay",
                "app.py",
                py("app.py", "from settings import USER_URL as base\n"),
            ),
        ]);
        let r = resolve_in(&snap, "web/src/app.ts", &Value::reference("API"));
        assert_eq!(r.text().as_deref(), Some("http://orders:8080"), "{r:?}");
        let r = resolve_in(&snap, "pay/app.py", &Value::reference("base"));
        assert_eq!(r.text().as_deref(), Some("http://user:8080"), "{r:?}");
    }

    #[test]
    fn python_sibling_modules_and_config_keys() {
        let mut cfg = FileFacts::default();
        cfg.bindings
            .push(bind("USER_URL", Value::lit("http://user:8080"), 1));
        let mut app = FileFacts::default();
        app.imports.push(Import {
            module: "settings".into(),
            names: vec!["USER_URL".into()],
            alias: None,
            line: 1,
            reexport: false,
            renamed: Vec::new(),
        });
        let mut yml = FileFacts::default();
        yml.properties.push(Property {
            key: "retail.ui.endpoints.catalog".into(),
            value: "http://${CATALOG_HOST:catalog}:8080".into(),
            line: 4,
        });
        let snap = Snapshot::from_facts(vec![
            ("payment", "settings.py", cfg),
            ("payment", "app.py", app),
            ("payment", "application.yml", yml),
        ]);
        let r = resolve_in(&snap, "payment/app.py", &Value::reference("USER_URL"));
        assert_eq!(r.text().as_deref(), Some("http://user:8080"));
        let r = resolve_in(
            &snap,
            "payment/app.py",
            &Value::config("retail.ui.endpoints.catalog", None),
        );
        assert_eq!(r.text().as_deref(), Some("http://catalog:8080"));
        assert_eq!(r.how, "config retail.ui.endpoints.catalog");
    }

    #[test]
    fn a_spring_value_placeholder_reads_the_services_property_files() {
        use crate::index::facts::Language;
        let java = r#"package acme;
@Component
public class OrderListener {
    private final KafkaTemplate<String, String> kafka;
    @Value("${app.topics.shipped}")
    private String shippedTopic;
    @KafkaListener(topics = "${app.topics.orders}")
    public void onOrder(String msg) { kafka.send(shippedTopic, msg); }
}
"#;
        let files = [
            (
                "src/main/java/acme/OrderListener.java",
                Language::Java,
                java,
            ),
            (
                "src/main/resources/application.properties",
                Language::Properties,
                "app.topics.shipped=orders.shipped\n",
            ),
            (
                "src/main/resources/application.yml",
                Language::Yaml,
                "app:\n  topics:\n    orders: orders.placed\n",
            ),
        ];
        let snap = Snapshot::from_facts(
            files
                .iter()
                .map(|(p, l, t)| ("worker", *p, crate::index::lang::extract(*l, p, t)))
                .collect(),
        );
        let mut topics: Vec<&str> = snap
            .graph
            .events
            .iter()
            .map(|e| snap.graph.topics[e.topic as usize].name.as_str())
            .collect();
        topics.sort();
        assert_eq!(topics, ["orders.placed", "orders.shipped"]);
    }

    #[test]
    fn an_unresolved_spring_placeholder_is_called_a_property() {
        let hole = |n: &str| Resolved::exact(vec![Seg::hole(Some(n), HoleKind::Env)]);
        let why = hole("retail.orders.topic").why_unresolved().unwrap();
        assert!(why.starts_with("property retail.orders.topic"), "{why}");
        let why = hole("ORDERS_TOPIC").why_unresolved().unwrap();
        assert!(why.starts_with("env ORDERS_TOPIC has no default"), "{why}");
    }

    #[test]
    fn placeholders_read_env_and_keys() {
        let lit = |s: &str| Part::Lit(s.into());
        let env = |var: &str, default: Option<&str>| Part::Env {
            var: var.into(),
            default: default.map(str::to_string),
        };
        let config = |key: &str, default: Option<&str>| Part::Config {
            key: key.into(),
            default: default.map(str::to_string),
        };
        assert_eq!(
            parse_placeholders("http://${HOST:cart}/x/${a.b}").parts,
            [
                lit("http://"),
                env("HOST", Some("cart")),
                lit("/x/"),
                config("a.b", None)
            ]
        );
        assert_eq!(parse_placeholders("plain"), Value::lit("plain"));
        assert_eq!(parse_placeholders("${open"), Value::lit("${open"));
        // A default that is a placeholder: its innermost default; the text after stays.
        assert_eq!(
            parse_placeholders("http://${carts.host:${CARTS_HOST:carts}}/carts").parts,
            [
                lit("http://"),
                config("carts.host", Some("carts")),
                lit("/carts")
            ]
        );
        let v = parse_placeholders("${A:${B}}/x");
        assert_eq!(v.parts.last(), Some(&Part::Lit("/x".into())));
        // Deep nesting is bounded, unbalanced nesting is text.
        let deep = format!("{}x{}/y", "${A:".repeat(10_000), "}".repeat(10_000));
        assert_eq!(
            parse_placeholders(&deep).parts.last(),
            Some(&Part::Lit("/y".into()))
        );
        assert_eq!(parse_placeholders("${A:${B}"), Value::lit("${A:${B}"));
    }
}
