//! The item walk: functions, methods, structs, enums, traits, modules, constants, type aliases,
//! `macro_rules!`, `use` and `extern crate`, with `impl`/`trait`/`mod` scopes on a stack.

use super::*;

impl<'t, 'a> Rs<'t, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // Items
    // -----------------------------------------------------------------------------------------

    pub(super) fn items(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut scopes: Vec<Frame<'a>> = Vec::new();
        let mut attrs: Vec<usize> = Vec::new();
        let mut i = 0;
        while i < n {
            if let Some(top) = scopes.last()
                && i >= top.end
            {
                let end = top.end;
                scopes.pop();
                if i == end {
                    i += 1;
                }
                attrs.clear();
                continue;
            }
            if t.is_punct(i, b'#') && t.is_punct(i + 1, b'[') {
                attrs.push(i + 1);
                i = t.skip_group(i + 1);
                continue;
            }
            if t.is_punct(i, b'#') && t.is_punct(i + 1, b'!') && t.is_punct(i + 2, b'[') {
                i = t.skip_group(i + 2);
                continue;
            }
            let frame = scopes.last().copied();
            let start_line = attrs.first().map_or(t.line(i), |&a| t.line(a));
            let doc_line =
                t.lx.doc_comment_above(start_line)
                    .or((!attrs.is_empty()).then_some(start_line));
            let item = Item {
                frame,
                doc_line,
                attrs: std::mem::take(&mut attrs),
            };
            // Visibility and qualifiers.
            let mut j = i;
            let mut public = false;
            if t.is(j, "pub") {
                public = true;
                j += 1;
                if t.is_punct(j, b'(') {
                    j = t.skip_group(j);
                }
            }
            let mut extern_block = false;
            loop {
                match t.ident(j) {
                    Some("async" | "unsafe" | "default" | "auto") => j += 1,
                    Some("const")
                        if t.is(j + 1, "fn") || t.is(j + 1, "unsafe") || t.is(j + 1, "async") =>
                    {
                        j += 1
                    }
                    Some("extern") if !t.is(j + 1, "crate") => {
                        j += 1;
                        if t.is_str(j) {
                            j += 1;
                        }
                        if t.is_punct(j, b'{') {
                            extern_block = true;
                            break;
                        }
                    }
                    _ => break,
                }
            }
            if extern_block {
                scopes.push(Frame {
                    end: t.close(j).unwrap_or(n),
                    kind: ScopeKind::Block,
                    name: None,
                });
                i = j + 1;
                continue;
            }
            i = match t.ident(j) {
                Some("fn") => self.func(j, &item),
                Some(kw @ ("struct" | "union")) => self.structure(j, &item, kw),
                Some("enum") => self.enumeration(j, &item),
                Some("trait") => match self.trait_item(j, &item) {
                    (next, Some(frame)) => {
                        scopes.push(frame);
                        next
                    }
                    (next, None) => next,
                },
                Some("impl") => match self.impl_item(j) {
                    (next, Some(frame)) => {
                        scopes.push(frame);
                        next
                    }
                    (next, None) => next,
                },
                Some("mod") => match self.module(j, &item) {
                    (next, Some(frame)) => {
                        scopes.push(frame);
                        next
                    }
                    (next, None) => next,
                },
                Some("const" | "static") => self.constant(j, &item),
                Some("type") => self.type_alias(j, &item),
                Some("macro_rules") if t.is_punct(j + 1, b'!') => self.macro_rules(j, &item),
                Some("use") => self.use_item(j, public),
                Some("extern") if t.is(j + 1, "crate") => self.extern_crate(j, public),
                // An item-level macro call: `lazy_static! { … }`, `include_proto!("x");`.
                Some(_) if t.is_punct(j + 1, b'!') => t.skip_group(j + 2).max(j + 1),
                _ => t.skip_group(i).max(i + 1),
            };
        }
    }

    /// [`FileFacts::push_symbol`] with the container as the walk holds it.
    pub(super) fn push_symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        lines: (u32, u32),
        doc_line: Option<u32>,
        container: Option<&str>,
    ) {
        let container = container.map(str::to_string);
        self.facts
            .push_symbol(name, kind, lines, doc_line, container);
    }

    /// From `k`, the index of the first `{` or `;` at this level (or a closer, or the end).
    pub(super) fn to_body(&self, mut k: usize) -> usize {
        let t = self.t;
        while k < t.len() {
            if matches!(t.punct(k), b'{' | b';' | b'}' | b')') {
                return k;
            }
            k = t.skip_group(k);
        }
        k
    }

    /// The end line of an item whose body or terminator is at `k`.
    pub(super) fn end_line_at(&self, k: usize) -> u32 {
        let t = self.t;
        if t.is_punct(k, b'{') || t.is_punct(k, b'(') {
            t.group_end_line(k)
        } else {
            t.line(k.min(t.len().saturating_sub(1)))
        }
    }

    pub(super) fn func(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let n = t.len();
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        let mut k = self.t.skip_generic_args(j + 2);
        let mut params = None;
        if t.is_punct(k, b'(') {
            params = Some((k, t.close(k).unwrap_or(n)));
            k = t.skip_group(k);
        }
        let k = self.to_body(k);
        let body = t.is_punct(k, b'{').then(|| (k, t.close(k).unwrap_or(n)));
        let (kind, container) = match item.frame {
            Some(Frame {
                kind: ScopeKind::Impl | ScopeKind::Trait,
                name,
                ..
            }) => (SymbolKind::Method, name),
            Some(Frame {
                kind: ScopeKind::Mod,
                name,
                ..
            }) => (SymbolKind::Function, name),
            _ => (SymbolKind::Function, None),
        };
        let line = t.line(j + 1);
        self.push_symbol(
            name,
            kind,
            (line, self.end_line_at(k)),
            item.doc_line,
            container,
        );
        self.funcs.push(Func {
            start: j,
            params,
            body,
        });
        self.attr_routes(item, name);
        if body.is_some() {
            t.skip_group(k)
        } else {
            k.max(j + 1) + usize::from(t.is_punct(k, b';'))
        }
    }

    /// actix-web / Rocket route attributes on a handler: `#[get("/orders/{id}")]`,
    /// `#[route("/x", method = "GET", method = "POST")]`.
    pub(super) fn attr_routes(&mut self, item: &Item<'a>, handler: &str) {
        let t = self.t;
        for &open in &item.attrs {
            let end = t.close(open).unwrap_or(t.len());
            // The attribute's path: `get`, `actix_web::get`.
            let mut k = open + 1;
            while t.ident(k).is_some() && t.op2(k + 1, b"::") {
                k += 3;
            }
            let Some(attr) = t.ident(k) else { continue };
            if !t.is_punct(k + 1, b'(') || k + 2 >= end || !t.is_str(k + 2) {
                continue;
            }
            let Some(path) = t.str_value(k + 2) else {
                continue;
            };
            if !path.starts_with('/') {
                continue;
            }
            let mut methods = Vec::new();
            if HTTP_ATTRS.contains(&attr) {
                methods.push(attr.to_ascii_uppercase());
            } else if attr == "route" {
                for (a, b) in t.args(k + 1).into_iter().skip(1) {
                    if t.is(a, "method")
                        && t.is_punct(a + 1, b'=')
                        && b == a + 3
                        && t.is_str(a + 2)
                        && let Some(m) = t.str_value(a + 2)
                    {
                        methods.push(m.to_ascii_uppercase());
                    }
                }
                if methods.is_empty() {
                    methods.push("ANY".to_string());
                }
            } else {
                continue;
            }
            for method in methods {
                self.facts.http.push(HttpFact::Route {
                    method,
                    path: path.to_string(),
                    handler: Some(handler.to_string()),
                    line: t.line(open),
                });
            }
        }
    }

    pub(super) fn structure(&mut self, j: usize, item: &Item<'a>, kw: &str) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        // `union` is also an ordinary identifier; only `union Name {` is an item.
        if kw == "union" && !(t.is_punct(j + 2, b'{') || t.is_punct(j + 2, b'<')) {
            return j + 1;
        }
        let mut k = self.t.skip_generic_args(j + 2);
        if t.is_punct(k, b'(') {
            k = t.skip_group(k);
        }
        let k = self.to_body(k);
        if t.is_punct(k, b'{') {
            self.structs.push((k, t.close(k).unwrap_or(t.len())));
        }
        let container = item.frame.and_then(|f| f.name);
        let line = t.line(j + 1);
        self.push_symbol(
            name,
            SymbolKind::Struct,
            (line, self.end_line_at(k)),
            item.doc_line,
            container,
        );
        t.skip_group(k).max(j + 2)
    }

    pub(super) fn enumeration(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        let k = self.to_body(self.t.skip_generic_args(j + 2));
        let container = item.frame.and_then(|f| f.name);
        let line = t.line(j + 1);
        self.push_symbol(
            name,
            SymbolKind::Enum,
            (line, self.end_line_at(k)),
            item.doc_line,
            container,
        );
        if t.is_punct(k, b'{') {
            let end = t.close(k).unwrap_or(t.len());
            let mut v = k + 1;
            let mut at_start = true;
            let mut attr_line = None;
            while v < end {
                if t.is_punct(v, b'#') && t.is_punct(v + 1, b'[') {
                    attr_line.get_or_insert(t.line(v));
                    v = t.skip_group(v + 1);
                    continue;
                }
                if t.is_punct(v, b',') {
                    at_start = true;
                    attr_line = None;
                    v += 1;
                    continue;
                }
                if at_start && let Some(variant) = t.ident(v) {
                    let vline = t.line(v);
                    let from = attr_line.unwrap_or(vline);
                    let doc = t.lx.doc_comment_above(from).or(attr_line);
                    let vend = if t.is_punct(v + 1, b'{') || t.is_punct(v + 1, b'(') {
                        t.group_end_line(v + 1)
                    } else {
                        vline
                    };
                    self.push_symbol(
                        variant,
                        SymbolKind::EnumValue,
                        (vline, vend),
                        doc,
                        Some(name),
                    );
                }
                at_start = false;
                v = t.skip_group(v);
            }
        }
        t.skip_group(k).max(j + 2)
    }

    pub(super) fn trait_item(&mut self, j: usize, item: &Item<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return (j + 1, None);
        };
        let k = self.to_body(self.t.skip_generic_args(j + 2));
        let line = t.line(j + 1);
        let container = item.frame.and_then(|f| f.name);
        self.push_symbol(
            name,
            SymbolKind::Trait,
            (line, self.end_line_at(k)),
            item.doc_line,
            container,
        );
        if t.is_punct(k, b'{') {
            let frame = Frame {
                end: t.close(k).unwrap_or(t.len()),
                kind: ScopeKind::Trait,
                name: Some(name),
            };
            return (k + 1, Some(frame));
        }
        (k.max(j + 2), None)
    }

    pub(super) fn impl_item(&mut self, j: usize) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let start = self.t.skip_generic_args(j + 1);
        let body = self.to_body(start);
        // `impl Trait for Type`: a `for` outside angle brackets that is not `for<'a>`.
        let mut depth = 0i32;
        let mut for_at = None;
        let mut where_at = body;
        let mut k = start;
        while k < body {
            if t.is_punct(k, b'<') {
                depth += 1;
            } else if t.is_punct(k, b'>') && !(t.is_punct(k - 1, b'-') && t.joined(k - 1)) {
                depth -= 1;
            } else if depth == 0 && t.is(k, "for") && !t.is_punct(k + 1, b'<') && for_at.is_none() {
                for_at = Some(k);
            } else if depth == 0 && t.is(k, "where") {
                where_at = k;
                break;
            }
            k = t.skip_group(k);
        }
        let (trait_range, self_range) = match for_at {
            Some(f) => (Some((start, f)), (f + 1, where_at)),
            None => (None, (start, where_at)),
        };
        let self_type = self.type_name(self_range);
        let trait_path = trait_range.map_or_else(Vec::new, |r| self.path_segments(r));
        self.impls.push(ImplHeader {
            trait_path,
            self_type,
            line: t.line(j),
        });
        if t.is_punct(body, b'{') {
            let frame = Frame {
                end: t.close(body).unwrap_or(t.len()),
                kind: ScopeKind::Impl,
                name: self_type,
            };
            return (body + 1, Some(frame));
        }
        (body.max(j + 1), None)
    }

    /// The name of a type written in `s..e`: the last path segment outside angle brackets,
    /// skipping references, lifetimes and `dyn`/`mut` (`&'a mut orders::Wrapper<T>` →
    /// `Wrapper`).
    pub(super) fn type_name(&self, (s, e): (usize, usize)) -> Option<&'a str> {
        let t = self.t;
        let mut depth = 0i32;
        let mut name = None;
        let mut k = s;
        while k < e {
            if t.is_punct(k, b'<') {
                depth += 1;
            } else if t.is_punct(k, b'>') {
                depth -= 1;
            } else if t.is_punct(k, b'\'') {
                k += 2;
                continue;
            } else if depth == 0
                && let Some(id) = t.ident(k)
                && !matches!(id, "dyn" | "mut" | "impl" | "const")
            {
                name = Some(id);
            } else if t.is_punct(k, b'(') || t.is_punct(k, b'[') {
                if depth == 0 && name.is_none() {
                    return None;
                }
                k = t.skip_group(k);
                continue;
            }
            k += 1;
        }
        name
    }

    /// The `::`-separated segments of the path in `s..e` outside angle brackets.
    pub(super) fn path_segments(&self, (s, e): (usize, usize)) -> Vec<&'a str> {
        let t = self.t;
        let mut depth = 0i32;
        let mut out = Vec::new();
        for k in s..e {
            if t.is_punct(k, b'<') {
                depth += 1;
            } else if t.is_punct(k, b'>') {
                depth -= 1;
            } else if depth == 0
                && let Some(id) = t.ident(k)
            {
                out.push(id);
            }
        }
        out
    }

    pub(super) fn module(&mut self, j: usize, item: &Item<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return (j + 1, None);
        };
        let line = t.line(j + 1);
        let container = item.frame.and_then(|f| f.name);
        if t.is_punct(j + 2, b'{') {
            self.push_symbol(
                name,
                SymbolKind::Module,
                (line, t.group_end_line(j + 2)),
                item.doc_line,
                container,
            );
            let frame = Frame {
                end: t.close(j + 2).unwrap_or(t.len()),
                kind: ScopeKind::Mod,
                name: Some(name),
            };
            return (j + 3, Some(frame));
        }
        self.push_symbol(
            name,
            SymbolKind::Module,
            (line, line),
            item.doc_line,
            container,
        );
        (j + 2, None)
    }

    /// `const NAME: T = …;` / `static [mut] NAME: T = …;`.
    pub(super) fn constant(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let mut k = j + 1;
        if t.is(k, "mut") {
            k += 1;
        }
        let Some(name) = t.ident(k) else {
            return k.max(j + 1);
        };
        let end = self.stmt_end(k, t.len());
        if name != "_" {
            let container = item.frame.and_then(|f| f.name);
            let line = t.line(k);
            let end_line = t.end_line(end.min(t.len().saturating_sub(1)));
            self.push_symbol(
                name,
                SymbolKind::Constant,
                (line, end_line),
                item.doc_line,
                container,
            );
            let eq = (k..end).find(|&x| t.is_punct(x, b'=') && !t.is_punct(x + 1, b'>'));
            if let Some(eq) = eq
                && let value = self.value((eq + 1, end))
                && !value.is_dynamic()
            {
                let qualified = match item.frame {
                    Some(Frame {
                        kind: ScopeKind::Impl | ScopeKind::Trait,
                        name: Some(c),
                        ..
                    }) => format!("{c}.{name}"),
                    _ => name.to_string(),
                };
                self.facts.bindings.push(Binding {
                    name: qualified,
                    value,
                    line,
                });
            }
        }
        end + 1
    }

    /// The end of the statement at `k`: its `;` or the closer of the enclosing group.
    pub(super) fn stmt_end(&self, mut k: usize, limit: usize) -> usize {
        let t = self.t;
        while k < limit {
            if matches!(t.punct(k), b';' | b'}' | b')' | b']') {
                return k;
            }
            k = t.skip_group(k);
        }
        limit.min(t.len())
    }

    pub(super) fn type_alias(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        let end = self.stmt_end(j + 1, t.len());
        let container = item.frame.and_then(|f| f.name);
        let line = t.line(j + 1);
        let end_line = t.line(end.min(t.len().saturating_sub(1)));
        self.push_symbol(
            name,
            SymbolKind::TypeAlias,
            (line, end_line),
            item.doc_line,
            container,
        );
        end + 1
    }

    pub(super) fn macro_rules(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 2) else {
            return j + 2;
        };
        let open = j + 3;
        let line = t.line(j + 2);
        let container = item.frame.and_then(|f| f.name);
        let end_line = self.end_line_at(open);
        self.push_symbol(
            name,
            SymbolKind::Function,
            (line, end_line),
            item.doc_line,
            container,
        );
        t.skip_group(open).max(j + 3)
    }

    /// `use a::b::{c, d as e, f::{g, self}};` → module `a::b`, names `c d g` with `d` bound
    /// as `e` (`self` left out; a single `use a::b as x;` keeps `x` as the alias and binds
    /// `b` as `x`).
    pub(super) fn use_item(&mut self, j: usize, public: bool) -> usize {
        let t = self.t;
        let end = self.stmt_end(j + 1, t.len());
        let mut k = j + 1;
        if t.op2(k, b"::") {
            k += 2;
        }
        let mut segs: Vec<&str> = Vec::new();
        let mut names = Vec::new();
        let mut renamed = Vec::new();
        let mut alias = None;
        while k < end {
            if let Some(id) = t.ident(k) {
                segs.push(id);
                k += 1;
                if t.op2(k, b"::") {
                    k += 2;
                    continue;
                }
                if t.is(k, "as") {
                    alias = t.ident(k + 1);
                }
                break;
            }
            if t.is_punct(k, b'{') {
                let close = t.close(k).unwrap_or(end).min(end);
                for x in k + 1..close {
                    let Some(id) = t.ident(x) else { continue };
                    let leaf = matches!(t.punct(x + 1), b',' | b'}')
                        || t.is(x + 1, "as")
                        || x + 1 == close;
                    if leaf
                        && !t.is(x.wrapping_sub(1), "as")
                        && !matches!(id, "self" | "super" | "crate")
                    {
                        if t.is(x + 1, "as")
                            && let Some(local) = t.ident(x + 2)
                            && local != id
                            && local != "_"
                        {
                            renamed.push((id.to_string(), local.to_string()));
                        }
                        names.push(id.to_string());
                    }
                }
                break;
            }
            break; // `*` or junk
        }
        // With a group or a glob, the module is every segment before it.
        let group_or_glob = t.is_punct(k, b'{') || t.is_punct(k, b'*');
        if !group_or_glob
            && segs.len() > 1
            && let Some(last) = segs.pop()
        {
            if let Some(local) = alias.filter(|a| *a != last && *a != "_") {
                renamed.push((last.to_string(), local.to_string()));
            }
            names.push(last.to_string());
        }
        if !segs.is_empty() {
            let module = segs.join("::");
            for n in &names {
                if segs.last().is_some_and(|m| m.ends_with("_server")) {
                    self.server_names.insert(n.clone());
                }
                if segs.last().is_some_and(|m| m.ends_with("_client")) {
                    self.client_names.insert(n.clone());
                }
            }
            self.facts.imports.push(Import {
                module,
                names,
                alias: alias.map(str::to_string),
                line: t.line(j),
                reexport: public,
                renamed,
            });
        }
        end + 1
    }

    pub(super) fn extern_crate(&mut self, j: usize, public: bool) -> usize {
        let t = self.t;
        let end = self.stmt_end(j + 2, t.len());
        if let Some(name) = t.ident(j + 2) {
            let alias = t.is(j + 3, "as").then(|| t.ident(j + 4)).flatten();
            self.facts.imports.push(Import {
                reexport: public,
                ..Import::whole_module(name.to_string(), alias.map(str::to_string), t.line(j))
            });
        }
        end + 1
    }

    /// tonic servers declared by implementing the generated trait:
    /// `impl orders_server::Orders for OrdersImpl` (or `Orders` imported from `orders_server`).
    pub(super) fn servers_from_impls(&mut self) {
        for h in std::mem::take(&mut self.impls) {
            let n = h.trait_path.len();
            let Some(&svc) = h.trait_path.last() else {
                continue;
            };
            let from_server_mod = n >= 2 && h.trait_path[n - 2].ends_with("_server");
            if from_server_mod || (n == 1 && self.server_names.contains(svc)) {
                self.facts.grpc.push(GrpcFact::Server {
                    service: svc.to_string(),
                    impl_type: h.self_type.map(str::to_string),
                    line: h.line,
                });
            }
        }
    }
}
