//! Pass 2, declarations: namespaces, `using` directives, types and their members on an
//! explicit stack of regions (nesting never recurses), with what they declare: gRPC server
//! bases, MassTransit consumers, controller actions and Refit calls.

use super::*;

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn declarations(&mut self) {
        let mut work = vec![Region::file(self.t.len())];
        let mut poll = Every::new();
        while let Some(r) = work.pop() {
            if poll.stop() {
                return;
            }
            if r.class.is_some() {
                self.type_body(r, &mut work);
            } else {
                self.namespace_body(r, &mut work);
            }
        }
    }

    /// From `i`, past preprocessor lines, to the next declaration before `b`: where it starts
    /// after its attributes, the attributes' first line and the attributes; `None` at `b`.
    fn member_start(&self, mut i: usize, b: usize) -> Option<(usize, Option<u32>, Vec<Attr<'t>>)> {
        loop {
            if i >= b {
                return None;
            }
            if self.t.punct(i) == b'#' {
                i = self.skip_line(i, b);
                continue;
            }
            let (j, attr_line, attrs) = self.attributes(i, b);
            if j >= b {
                return None;
            }
            if self.t.punct(j) == b'#' {
                i = j;
                continue;
            }
            return Some((j, attr_line, attrs));
        }
    }

    fn namespace_body(&mut self, r: Region, work: &mut Vec<Region>) {
        let t = self.t;
        let b = r.b;
        let mut container = r.container.clone();
        let mut i = r.a;
        let mut poll = Every::new();
        while i < b && !poll.stop() {
            let Some((j, attr_line, attrs)) = self.member_start(i, b) else {
                break;
            };
            let site = Site::new(self.t, container.as_deref(), attr_line);
            i = j;
            match t.ident(i) {
                Some("using") if !t.is(i + 1, "var") && t.punct(i + 1) != b'(' => {
                    i = self.using_directive(i, b);
                    continue;
                }
                Some("global") if t.is(i + 1, "using") => {
                    i = self.using_directive(i + 1, b);
                    continue;
                }
                Some("extern") if t.is(i + 1, "alias") => {
                    i = self.stmt_next(i, b);
                    continue;
                }
                Some("namespace") => {
                    let mut k = i + 1;
                    let mut name = String::new();
                    while let Some(id) = t.ident(k) {
                        name.push_str(id);
                        if t.punct(k + 1) == b'.' {
                            name.push('.');
                            k += 2;
                        } else {
                            k += 1;
                            break;
                        }
                    }
                    if name.is_empty() {
                        i += 1;
                        continue;
                    }
                    let full = match &container {
                        Some(c) => format!("{c}.{name}"),
                        None => name.clone(),
                    };
                    if self.facts.package.is_none() {
                        self.facts.package = Some(full.clone());
                    }
                    if t.punct(k) == b'{' {
                        let end_line = self.close_line(k);
                        self.declare(site, &name, SymbolKind::Module, i + 1, end_line);
                        let body = Region::body(t, k, b, Some(full), None);
                        let end = body.b;
                        work.push(body);
                        i = end + 1;
                    } else {
                        // File-scoped: the rest of the file is in the namespace.
                        let end_line = t.end_line(t.len().saturating_sub(1));
                        self.declare(site, &name, SymbolKind::Module, i + 1, end_line);
                        container = Some(full);
                        i = if t.punct(k) == b';' { k + 1 } else { k };
                    }
                    continue;
                }
                _ => {}
            }
            let mut k = i;
            while t.ident(k).is_some_and(|m| MODIFIERS.contains(&m)) {
                k += 1;
            }
            if t.ident(k).is_some_and(is_type_keyword) {
                i = self.type_decl(k, site, &attrs, work, b);
            } else {
                // A top-level statement (Program.cs) or something unknown.
                i = self.stmt_next(i, b);
            }
        }
    }

    /// `using X.Y;`, `using static X.Y;`, `using Alias = X.Y;`, `using X = Y<Z>;`.
    fn using_directive(&mut self, i: usize, b: usize) -> usize {
        let t = self.t;
        let mut k = i + 1;
        if t.is(k, "static") {
            k += 1;
        }
        let mut alias = None;
        if t.ident(k).is_some() && t.punct(k + 1) == b'=' {
            alias = t.ident(k).map(str::to_string);
            k += 2;
        }
        // The name: identifiers, dots, `::` and type arguments, up to the `;`.
        let mut module = String::new();
        let mut end = k;
        while end < b {
            let skipped = t.skip_angles(end, b);
            if skipped > end {
                (end..skipped).for_each(|j| module.push_str(t.text(j)));
                end = skipped;
                continue;
            }
            match t.kind(end) {
                Some(TokKind::Ident) => module.push_str(t.text(end)),
                Some(TokKind::Punct) if t.punct(end) == b'.' || t.is(end, "::") => {
                    module.push_str(t.text(end));
                }
                _ => break,
            }
            end += 1;
        }
        let end = if t.punct(end) == b';' {
            end
        } else {
            end.saturating_sub(1)
        };
        if !module.is_empty() {
            let line = self.line(i);
            self.facts
                .imports
                .push(Import::whole_module(module, alias, line));
        }
        end + 1
    }

    /// A type declaration whose keyword is at `kw`; returns the index past it.
    fn type_decl(
        &mut self,
        kw: usize,
        site: Site,
        attrs: &[Attr],
        work: &mut Vec<Region>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let keyword = t.text(kw);
        let mut k = kw + 1;
        let mut kind = match keyword {
            "class" | "record" => SymbolKind::Class,
            "struct" => SymbolKind::Struct,
            "interface" => SymbolKind::Interface,
            "enum" => SymbolKind::Enum,
            _ => SymbolKind::TypeAlias,
        };
        if keyword == "record" {
            if t.is(k, "struct") {
                kind = SymbolKind::Struct;
                k += 1;
            } else if t.is(k, "class") {
                k += 1;
            }
        }
        if keyword == "delegate" {
            return self.delegate_decl(kw, k, kind, site, b);
        }
        let Some(name) = t.ident(k) else {
            return self.stmt_next(kw, b);
        };
        let name_idx = k;
        k += 1;
        let mut j = t.skip_angles(k, b);
        if t.punct(j) == b'(' {
            j = t.skip_group(j);
        }
        // The base list and constraints, up to the body or the `;`.
        let mut bases: Vec<Vec<&str>> = Vec::new();
        // The first token of each base, for the line that names it.
        let mut base_at: Vec<usize> = Vec::new();
        let mut in_bases = false;
        let (body, j) = cfamily::type_header(t, j, b, |j| match t.punct(j) {
            b':' if !in_bases && bases.is_empty() => {
                in_bases = true;
                bases.push(Vec::new());
            }
            b',' if in_bases => bases.push(Vec::new()),
            _ => {
                if t.is(j, "where") {
                    in_bases = false;
                } else if in_bases
                    && let Some(id) = t.ident(j)
                    && let Some(cur) = bases.last_mut()
                {
                    if cur.is_empty() {
                        base_at.push(j);
                    }
                    cur.push(id);
                }
            }
        });
        let end_line = match body {
            Some(o) => self.close_line(o),
            None => self.line(j.min(b.saturating_sub(1))),
        };
        self.declare(site, name, kind, name_idx, end_line);
        self.base_facts(name, name_idx, &bases, &base_at);
        let Some(open) = body else {
            return if t.punct(j) == b';' {
                j + 1
            } else {
                j.max(kw + 1)
            };
        };
        let end = t.close(open).unwrap_or(b);
        self.type_members(name, kind, open, end, attrs, work);
        let after = end + 1;
        if t.punct(after) == b';' {
            after + 1
        } else {
            after
        }
    }

    /// `delegate Ret Name<T>(…);`: a type alias symbol; the index past it.
    fn delegate_decl(
        &mut self,
        kw: usize,
        k: usize,
        kind: SymbolKind,
        site: Site,
        b: usize,
    ) -> usize {
        let t = self.t;
        // `delegate Ret Name<T>(…);`: the name is the identifier before `(` or `<`.
        let mut open = k;
        while open < b && !matches!(t.punct(open), b'(' | b';' | b'{' | b'}' | b')') {
            open += 1;
        }
        if t.punct(open) != b'(' {
            return self.stmt_next(kw, b);
        }
        let mut n = open - 1;
        if t.punct(n) == b'>' {
            let mut j = k;
            while j < open && t.punct(j) != b'<' {
                j += 1;
            }
            n = j.saturating_sub(1);
        }
        let next = self.stmt_next(open, b);
        if let Some(name) = t.ident(n) {
            let end_line = self.line(next.saturating_sub(1));
            self.declare(site, name, kind, n, end_line);
        }
        next
    }

    /// What a type's base list says: a generated gRPC base makes it a server, MassTransit
    /// `IConsumer<X>` a consumer of `X` (`base_at`: the first token of each base).
    fn base_facts(&mut self, name: &str, name_idx: usize, bases: &[Vec<&str>], base_at: &[usize]) {
        for (bi, segs) in bases.iter().enumerate() {
            if let Some(service) = grpc_base_service(segs) {
                // The line that names the service (a primary constructor may push the base
                // list below the class name).
                let line = self.line(base_at.get(bi).copied().unwrap_or(name_idx));
                self.facts.grpc.push(GrpcFact::Server {
                    service,
                    impl_type: Some(name.to_string()),
                    line,
                });
            }
        }
        for (bi, segs) in bases.iter().enumerate() {
            // MassTransit `class X : IConsumer<OrderCreated>`: the class consumes the event.
            if segs.last() == Some(&"IConsumer")
                && let Some(&at) = base_at.get(bi)
                && let Some(ev) = self.type_arg_after(at + (segs.len() - 1) * 2)
            {
                // Its `Consume` method handles it (the graph moves the consumer there).
                let via = format!("MassTransit{}{name}", crate::index::facts::HANDLED_BY);
                self.typed_event(EventRole::Consumer, ev, at, &via);
            }
        }
    }

    /// A type's body `open..end`: enum members as symbols, or a region for the member scan
    /// with the class context (controller, route prefix, interface).
    fn type_members(
        &mut self,
        name: &str,
        kind: SymbolKind,
        open: usize,
        end: usize,
        attrs: &[Attr],
        work: &mut Vec<Region>,
    ) {
        let t = self.t;
        if kind == SymbolKind::Enum {
            for (a, _) in t.args_between(open + 1, end) {
                let (a, _, _) = self.attributes(a, end);
                if let Some(member) = t.ident(a) {
                    cfamily::push_enum_value(&mut self.facts, t, member, a, name);
                }
            }
        } else {
            let mut controller = name.ends_with("Controller") && name.len() > "Controller".len();
            let mut route_prefix = None;
            for a in attrs {
                match a.name {
                    "ApiController" => controller = true,
                    "Route" | "RoutePrefix" => {
                        controller = true;
                        if let Some(p) = self.attr_path(a) {
                            let short = name.strip_suffix("Controller").unwrap_or(name);
                            route_prefix =
                                Some(p.replace("[controller]", &short.to_ascii_lowercase()));
                        } else if let Some(prefix) = self.attr_named_value(a) {
                            // `[Route(ApiRoutes.Orders)]`: a constant of another file, which
                            // the graph resolves; the routes are attribute routes under it.
                            route_prefix = Some(String::new());
                            self.facts.http.push(HttpFact::Prefix {
                                prefix,
                                first: self.line(open),
                                last: self.line(end),
                                line: self.line(a.open.unwrap_or(open)),
                            });
                        }
                    }
                    _ => {}
                }
            }
            work.push(Region {
                a: open + 1,
                b: end,
                container: Some(name.to_string()),
                class: Some(ClassCtx {
                    name: name.to_string(),
                    route_prefix,
                    controller,
                    interface: kind == SymbolKind::Interface,
                }),
            });
        }
    }

    /// The first argument of an attribute when it names constants this file does not bind
    /// (`[Route(ApiRoutes.Orders)]`, `[Route(Api.Base + "/orders")]`), for the graph to resolve.
    fn attr_named_value(&self, a: &Attr) -> Option<Value> {
        use crate::index::facts::Part;
        let t = self.t;
        let (x, y) = *t.args(a.open?).first()?;
        let v = eval(t, (x, y), &ExprRules::CSHARP, self.asg);
        let named = v.parts.iter().any(|p| matches!(p, Part::Ref { .. }));
        let known = v
            .parts
            .iter()
            .all(|p| matches!(p, Part::Ref { .. } | Part::Lit(_)));
        (named && known).then_some(v)
    }

    /// The first string argument of an attribute (`[Route("x")]`, `[HttpGet("{id}", Name = …)]`).
    fn attr_path(&self, a: &Attr) -> Option<String> {
        let t = self.t;
        let (x, _) = *t.args(a.open?).first()?;
        t.str_value(x).map(|s| s.into_owned())
    }

    fn type_body(&mut self, r: Region, work: &mut Vec<Region>) {
        let t = self.t;
        let b = r.b;
        let Some(ctx) = r.class else {
            return;
        };
        let cname = ctx.name.clone();
        let mut i = r.a;
        let mut poll = Every::new();
        while i < b && !poll.stop() {
            let Some((j, attr_line, attrs)) = self.member_start(i, b) else {
                break;
            };
            let member = Site::new(self.t, Some(&cname), attr_line);
            i = j;
            if t.punct(i) == b';' {
                i += 1;
                continue;
            }
            let start = i;
            let mut is_const = false;
            let mut is_static = false;
            let mut is_readonly = false;
            while let Some(m) = t.ident(i).filter(|m| MODIFIERS.contains(m)) {
                is_const |= m == "const";
                is_static |= m == "static";
                is_readonly |= m == "readonly";
                i += 1;
            }
            if t.ident(i).is_some_and(is_type_keyword) {
                i = self.type_decl(i, member, &attrs, work, b);
                continue;
            }
            if t.punct(i) == b'~' {
                // A finalizer.
                i = self.member_end(i, b).1;
                continue;
            }
            // The member head: up to `(`, `{`, `;`, `=` or `=>` at depth 0.
            let mut k = i;
            let stop = loop {
                if k >= b {
                    break None;
                }
                match t.punct(k) {
                    b'(' | b'{' | b';' | b'=' => break Some(k),
                    b'<' => k = t.skip_angles(k, b).max(k + 1),
                    b'[' => k = t.skip_group(k),
                    b'}' | b')' => break None,
                    _ if t.is(k, "=>") => break Some(k),
                    _ => k += 1,
                }
            };
            let Some(stop) = stop else {
                i = k.max(start + 1);
                continue;
            };
            match t.punct(stop) {
                b'(' => {
                    // A method, constructor or operator.
                    let mut n = stop - 1;
                    if t.punct(n) == b'>' {
                        let mut m = i;
                        let mut found = None;
                        while m < n {
                            if t.punct(m) == b'<' && t.skip_angles(m, b) == n + 1 {
                                found = Some(m);
                                break;
                            }
                            m += 1;
                        }
                        n = found.map_or(n, |m| m.saturating_sub(1));
                    }
                    let (end_line, next) = self.member_end(stop, b);
                    if let Some(name) = t
                        .ident(n)
                        .filter(|_| !t.is(n.saturating_sub(1), "operator"))
                    {
                        let kind = if name == cname && n == i {
                            SymbolKind::Constructor
                        } else {
                            SymbolKind::Method
                        };
                        self.declare(member, name, kind, n, end_line);
                        let line = attr_line.unwrap_or(self.line(n));
                        if ctx.controller {
                            // Conventional routing makes every public instance method an action.
                            let public = kind == SymbolKind::Method
                                && (start..n).any(|k| t.kw(k, "public"))
                                && !(start..n).any(|k| t.kw(k, "static"));
                            self.action_routes(&attrs, name, &ctx, line, public);
                        } else if ctx.interface {
                            self.refit_calls(&attrs, line);
                        }
                    }
                    i = next.max(start + 1);
                }
                b'{' => {
                    // A property or event with accessors; `= init;` may follow.
                    let mut next = t.skip_group(stop);
                    if t.punct(next) == b'=' {
                        next = self.stmt_next(next, b);
                    }
                    self.property(stop, next, member);
                    i = next.max(start + 1);
                }
                _ if t.is(stop, "=>") => {
                    let next = self.stmt_next(stop, b);
                    self.property(stop, next, member);
                    i = next.max(start + 1);
                }
                _ => {
                    let constant = is_const || (is_static && is_readonly);
                    let end = self.fields(i, stop, b, member, constant);
                    i = (end + 1).max(start + 1);
                }
            }
        }
    }

    /// Fields `Type a = x, b;` from `i` (the declarators end at the `;` after `stop`): a field
    /// symbol each, or when `constant` a constant symbol and its value. Returns the `;`.
    fn fields(&mut self, i: usize, stop: usize, b: usize, member: Site, constant: bool) -> usize {
        let t = self.t;
        let cname = member.container.unwrap_or_default();
        let end = t.find_at_depth0(stop, b, ";").unwrap_or(b);
        for (x, e) in declarators(t, i, end) {
            // The declarator's name is the identifier before `=` (or its end).
            let eq = (x..e).find(|&q| t.punct(q) == b'=' && t.skip_group(q) == q + 1);
            let name_at = eq.unwrap_or(e).checked_sub(1);
            let Some(n) = name_at.filter(|&n| n >= x) else {
                continue;
            };
            let Some(name) = t.ident(n) else {
                continue;
            };
            if !constant {
                // A field: a declaration, not a constant.
                let end_line = t.end_line(e.saturating_sub(1).max(n));
                self.declare(member, name, SymbolKind::Field, n, end_line);
                continue;
            }
            let end_line = t.end_line(e.saturating_sub(1).max(n));
            self.declare(member, name, SymbolKind::Constant, n, end_line);
            let Some(v) = eq.map(|q| q + 1) else {
                continue;
            };
            let value =
                if let Some(s) = t.str_lit(v).filter(|_| v + 1 == e && !self.interpolated(v)) {
                    Some(s.value().into_owned())
                } else {
                    self.env_lookup(v, e).and_then(|v| v.env_default())
                };
            if let Some(value) = value {
                let line = self.line(v);
                self.push_constant(format!("{cname}.{name}"), value, line);
            }
        }
        end
    }

    /// The end line and the index past a member whose parameter list opens at `open`:
    /// a `{ … }` body, an `=> …;` expression body, or a `;`.
    fn member_end(&self, open: usize, b: usize) -> (u32, usize) {
        let t = self.t;
        let mut j = if t.punct(open) == b'(' {
            t.skip_group(open)
        } else {
            open
        };
        while j < b {
            match t.punct(j) {
                b'{' => {
                    let end_line = self.close_line(j);
                    return (end_line, t.skip_group(j));
                }
                b';' => return (self.line(j), j + 1),
                b'}' => return (self.line(j.saturating_sub(1)), j),
                b'(' | b'[' => j = t.skip_group(j),
                _ if t.is(j, "=>") => {
                    let end = t.find_at_depth0(j, b, ";").unwrap_or(b);
                    return (self.line(end.min(b.saturating_sub(1))), end + 1);
                }
                _ => j += 1,
            }
        }
        (self.line(b.saturating_sub(1)), b)
    }

    /// `[HttpGet("{id}")]`, `[HttpPost]`, `[Route("x")] [HttpGet]`, `[AcceptVerbs("GET")]` on an
    /// action of a controller.
    /// A property (`public T Name { get; set; }`, `T Name => x;`) whose accessors or arrow
    /// start at `stop`: a field-kind declaration named by the identifier before them.
    fn property(&mut self, stop: usize, next: usize, member: Site) {
        let t = self.t;
        let Some(n) = stop.checked_sub(1) else { return };
        let Some(name) = t.ident(n) else { return };
        if matches!(
            name,
            "get" | "set" | "init" | "add" | "remove" | "operator" | "this"
        ) {
            return;
        }
        let end_line = t.line(next.saturating_sub(1).max(n));
        self.declare(member, name, SymbolKind::Field, n, end_line);
    }

    /// The routes of one controller action. Attribute routes join the controller's
    /// `[Route]` prefix; a controller without one is conventionally routed
    /// (`MapDefaultControllerRoute`: `/{controller}/{action}`), where every public method is an
    /// action, for any verb unless an `[HttpGet]`-style attribute says.
    fn action_routes(
        &mut self,
        attrs: &[Attr],
        action: &str,
        ctx: &ClassCtx,
        line: u32,
        public: bool,
    ) {
        if attrs.iter().any(|a| a.name == "NonAction") {
            return;
        }
        let mut route_sub: Option<String> = None;
        let mut verbs: Vec<(String, Option<String>)> = Vec::new();
        let mut action_name: Option<String> = None;
        for a in attrs {
            if a.name == "ActionName" {
                action_name = self.attr_path(a);
                continue;
            }
            let verb = match a.name {
                "HttpGet" => "GET",
                "HttpPost" => "POST",
                "HttpPut" => "PUT",
                "HttpDelete" => "DELETE",
                "HttpPatch" => "PATCH",
                "HttpHead" => "HEAD",
                "HttpOptions" => "OPTIONS",
                "Route" => {
                    route_sub = self.attr_path(a);
                    continue;
                }
                _ => continue,
            };
            verbs.push((verb.to_string(), self.attr_path(a)));
        }
        let conventional = ctx.route_prefix.is_none();
        if verbs.is_empty() && (route_sub.is_some() || (conventional && public)) {
            verbs.push(("ANY".to_string(), None));
        }
        let prefix = ctx.route_prefix.as_deref().unwrap_or("");
        let action_seg = action_name.unwrap_or_else(|| {
            action
                .strip_suffix("Async")
                .filter(|a| !a.is_empty())
                .unwrap_or(action)
                .to_string()
        });
        for (method, sub) in verbs {
            let sub = sub.or_else(|| route_sub.clone()).unwrap_or_default();
            let sub = sub.replace("[action]", &action_seg);
            let path = if sub.starts_with('/') || sub.starts_with("~/") {
                join_route("", sub.trim_start_matches('~'))
            } else if conventional && sub.is_empty() {
                let controller = ctx.name.strip_suffix("Controller").unwrap_or(&ctx.name);
                join_route(&format!("/{controller}"), &action_seg)
            } else {
                join_route(prefix, &sub)
            };
            self.facts.http.push(HttpFact::Route {
                method,
                path,
                handler: Some(action.to_string()),
                line,
            });
        }
    }
}

/// Declarations go to the file's symbols.
impl Declares for Ex<'_, '_, '_> {
    fn symbols(&mut self) -> &mut Vec<Symbol> {
        &mut self.facts.symbols
    }
}

impl Ex<'_, '_, '_> {
    /// Refit: `[Get("/users/{id}")] Task<User> GetUser(string id);` on an interface is an HTTP
    /// call by path.
    fn refit_calls(&mut self, attrs: &[Attr], line: u32) {
        for a in attrs {
            let method = match a.name {
                "Get" => "GET",
                "Post" => "POST",
                "Put" => "PUT",
                "Delete" => "DELETE",
                "Patch" => "PATCH",
                "Head" => "HEAD",
                _ => continue,
            };
            if let Some(path) = self
                .attr_path(a)
                .filter(|p| looks_like_http_path(p))
                .and_then(|p| http_path_of(&p))
            {
                self.facts.http.push(HttpFact::Call {
                    method: Some(method.to_string()),
                    url: Value::lit(path),
                    line,
                });
            }
        }
    }
}

/// The service a base type names when it is a generated gRPC base (`OrderService.
/// OrderServiceBase`, or `OrderServiceBase` after `using static`).
fn grpc_base_service(segs: &[&str]) -> Option<String> {
    let last = *segs.last()?;
    let stem = last.strip_suffix("Base")?;
    if stem.is_empty() {
        return None;
    }
    match segs {
        [.., outer, _] if *outer == stem => Some(stem.to_string()),
        [_] if stem.ends_with("Service") && stem.len() > "Service".len() => Some(stem.to_string()),
        _ => None,
    }
}

/// The declarators of a field declaration `from..end` (`Type a = x, b`), split at its
/// top-level commas: a comma inside the type's type arguments
/// (`ILogger<Handler<TRequest, TResponse>> _logger`) or inside a bracket group is no
/// separator. Angle brackets count only before a declarator's `=`, where they can only be
/// type arguments (after it, `a < b` is a comparison).
fn declarators(t: &Tokens, from: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut start, mut j, mut angle, mut init) = (from, from, 0u32, false);
    while j < end {
        match t.punct(j) {
            b'<' if !init => angle += 1,
            b'>' if !init => angle = angle.saturating_sub(t.text(j).len() as u32),
            b'=' if angle == 0 && t.text(j) == "=" => init = true,
            b',' if angle == 0 => {
                if j > start {
                    out.push((start, j));
                }
                start = j + 1;
                init = false;
            }
            _ => {}
        }
        j = t.skip_group(j);
    }
    if end > start {
        out.push((start, end));
    }
    out
}

#[cfg(test)]
mod field_tests {
    use crate::index::facts::SymbolKind;

    fn fields(src: &str) -> Vec<String> {
        let f = super::super::extract("A.cs", src);
        f.symbols
            .iter()
            .filter(|s| s.kind == SymbolKind::Field)
            .map(|s| s.name.clone())
            .collect()
    }

    #[test]
    fn a_comma_in_a_fields_type_arguments_separates_no_declarators() {
        let src = "namespace N;\npublic class LoggingBehavior<TRequest, TResponse>\n{\n    private readonly ILogger<LoggingBehavior<TRequest, TResponse>> _logger;\n    private readonly Mock<ILogger<IdentifiedCommandHandler<CreateOrderCommand, bool>>> _loggerMock;\n    private Dictionary<string, List<int>> _byName = new(), _other;\n    private int a = b < c ? 1 : 2, d;\n}\n";
        assert_eq!(
            fields(src),
            ["_logger", "_loggerMock", "_byName", "_other", "a", "d"]
        );
    }
}
