//! Declarations: `use` imports, types, functions, constants and enum cases with their doc
//! lines, Symfony route attributes and annotations, and `new X(…)` bindings (gRPC, Guzzle and
//! rdkafka handles), each read where the walk meets its keyword.

use super::*;
use crate::index::lang::script::{join, push_routes};

/// `use A\B\C;`, `use A\B\C as D;`, `use A\{B, C as D};`, `use function A\f;`. Returns where
/// the statement ends.
pub(super) fn use_stmt(src: &Src, st: &mut State, after: usize) -> usize {
    let code = src.code();
    let end = statement_end(code, after);
    let line = src.line_of(after);
    let mut s = after;
    if let Some((p, kw)) = lex::ident_after(code, after)
        && matches!(kw, "function" | "const")
    {
        s = p + kw.len();
    }
    for (a, z) in common::split_top(code, s, end, b',', &src.br) {
        let item = code[a..z].trim();
        if let Some(brace) = item.find('{') {
            let prefix = item[..brace]
                .trim()
                .trim_end_matches('\\')
                .trim_start_matches('\\');
            let open = a + (code[a..z].len() - code[a..z].trim_start().len()) + brace;
            let close = src.br.close_of(open).unwrap_or(z);
            let mut names = Vec::new();
            let mut renamed = Vec::new();
            for (x, y) in common::split_top(code, open + 1, close, b',', &src.br) {
                let (n, local) = match code[x..y].split_once(" as ") {
                    Some((n, l)) => (n.trim(), Some(l.trim())),
                    None => (code[x..y].trim(), None),
                };
                if n.is_empty() {
                    continue;
                }
                if let Some(l) =
                    local.filter(|l| !l.is_empty() && *l != n && l.bytes().all(is_ident_byte))
                {
                    renamed.push((n.to_string(), l.to_string()));
                }
                names.push(n.to_string());
            }
            st.facts.imports.push(Import {
                module: prefix.to_string(),
                names,
                alias: None,
                line,
                reexport: false,
                renamed,
            });
            continue;
        }
        let (module, alias) = match item.split_once(" as ") {
            Some((m, al)) => (m.trim(), Some(al.trim().to_string())),
            None => (item, None),
        };
        let module = module.trim_start_matches('\\');
        if module.is_empty() || !module.bytes().all(|c| is_ident_byte(c) || c == b'\\') {
            continue;
        }
        st.facts
            .imports
            .push(Import::whole_module(module.to_string(), alias, line));
    }
    end
}

/// The attribute blocks (`#[…]`) and modifiers directly before a declaration keyword at `kw`:
/// the start of the first one, and the attribute ranges (inside the brackets).
fn decl_head(src: &Src, kw: usize) -> (usize, Vec<(usize, usize)>) {
    let code = src.code();
    let b = code.as_bytes();
    let mut head = kw;
    let mut attrs = Vec::new();
    for _ in 0..32 {
        match lex::prev_non_space(code, head) {
            Some((p, b']')) => {
                let Some(open) = src.br.open_of(p) else { break };
                if open == 0 || b[open - 1] != b'#' {
                    break;
                }
                attrs.push((open + 1, p));
                head = open - 1;
            }
            Some((p, c)) if is_ident_byte(c) => {
                let Some((s, w)) = ident_before(code, p + 1) else {
                    break;
                };
                if !matches!(
                    w,
                    "public"
                        | "protected"
                        | "private"
                        | "static"
                        | "final"
                        | "abstract"
                        | "readonly"
                ) {
                    break;
                }
                head = s;
            }
            _ => break,
        }
    }
    attrs.reverse();
    (head, attrs)
}

/// The doc line of a declaration whose head (first attribute or modifier) starts at `head`.
fn doc_line(src: &Src, head: usize, attrs: &[(usize, usize)]) -> Option<u32> {
    let head_line = src.line_of(head);
    let first_attr = attrs.first().map(|&(s, _)| src.line_of(s));
    src.lx.doc_comment_above(head_line).or(first_attr)
}

/// Records the declaration `name` as a `kind` symbol of `class` over `lines`, documented by
/// the comment above its head (`head` and `attrs`, as [`decl_head`] gives them).
fn push_decl(
    src: &Src,
    st: &mut State,
    (name, kind): (&str, SymbolKind),
    lines: (u32, u32),
    (head, attrs): (usize, &[(usize, usize)]),
    class: Option<&str>,
) -> usize {
    let doc = doc_line(src, head, attrs);
    st.facts
        .push_symbol(name, kind, lines, doc, class.map(str::to_string))
}

/// Route attributes in `attrs` (Symfony `#[Route('/x', methods: ['GET'])]`, and
/// `#[Get('/x')]`-style verbs), each at the line of its own attribute.
fn route_attrs(src: &Src, attrs: &[(usize, usize)]) -> Vec<RouteDecl> {
    let code = src.code();
    let mut out = Vec::new();
    for &(s, e) in attrs {
        for (a, z) in common::split_top(code, s, e, b',', &src.br) {
            let Some((ns, ne)) = qualified_name(code, a) else {
                continue;
            };
            let name = code[ns..ne].rsplit('\\').next().unwrap_or("");
            let verb = match name {
                "Route" => None,
                "Get" | "Post" | "Put" | "Patch" | "Delete" | "Head" | "Options" => {
                    Some(name.to_ascii_uppercase())
                }
                _ => continue,
            };
            let Some((open, b'(')) = lex::next_non_space(code, ne).filter(|(p, _)| *p < z) else {
                continue;
            };
            let Some(close) = src.br.close_of(open) else {
                continue;
            };
            let args = src.args(open, close);
            let Some(path) = args
                .named("path")
                .or_else(|| args.named("uri"))
                .or_else(|| args.positional.first().copied())
                .and_then(|(x, y)| src.plain_string(x, y))
            else {
                continue;
            };
            let methods = match verb {
                Some(v) => vec![v],
                None => args
                    .named("methods")
                    .map(|(x, y)| src.upper_strings(x, y))
                    .unwrap_or_default(),
            };
            out.push(RouteDecl {
                methods,
                path,
                line: src.line_of(ns),
            });
        }
    }
    out
}

/// Docblock `@Route("/x", methods={"GET"})` and `@Route(path="/x", name="n")` annotations
/// (older Symfony), each at the line of its `@Route`.
fn route_annotations(src: &Src, head: usize) -> Vec<RouteDecl> {
    let Some(first) = src.lx.doc_comment_above(src.line_of(head)) else {
        return Vec::new();
    };
    let last = src.line_of(head).saturating_sub(1);
    let mut out = Vec::new();
    for c in src
        .lx
        .comments
        .iter()
        .filter(|c| c.first_line >= first && c.last_line <= last)
    {
        let text = src.lx.comment_text(c);
        let mut from = 0;
        while let Some(p) = text[from..].find("@Route(") {
            let at = from + p;
            let body = annotation_body(&text[at + 7..]);
            from = at + 7 + body.len();
            let mut path = None;
            let mut methods = Vec::new();
            for item in annotation_items(body) {
                let (key, value) = match item.split_once(['=', ':']) {
                    Some((k, v)) if !k.trim_start().starts_with('"') => (Some(k.trim()), v),
                    _ => (None, item),
                };
                let quoted = || value.split('"').skip(1).step_by(2);
                match key {
                    None | Some("path" | "value") if path.is_none() => {
                        path = quoted().next().map(str::to_string)
                    }
                    Some("methods") => methods = quoted().map(str::to_ascii_uppercase).collect(),
                    _ => {}
                }
            }
            if let Some(path) = path {
                out.push(RouteDecl {
                    methods,
                    path,
                    line: src.line_of(c.start + at),
                });
            }
        }
    }
    out
}

/// The text of an annotation's arguments after its `(`: up to the `)` that closes it, outside
/// quotes and braces.
fn annotation_body(rest: &str) -> &str {
    let mut depth = 0usize;
    let mut quoted = false;
    for (i, c) in rest.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' | '(' if !quoted => depth += 1,
            '}' if !quoted => depth = depth.saturating_sub(1),
            ')' if !quoted => {
                if depth == 0 {
                    return &rest[..i];
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    rest
}

/// The top-level comma-separated items of an annotation's arguments (docblock `*` margins
/// are whitespace to them).
fn annotation_items(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' | '(' if !quoted => depth += 1,
            '}' | ')' if !quoted => depth = depth.saturating_sub(1),
            ',' if !quoted && depth == 0 => {
                out.push(body[start..i].trim_matches(|c: char| c.is_whitespace() || c == '*'));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(body[start..].trim_matches(|c: char| c.is_whitespace() || c == '*'));
    out.retain(|s| !s.is_empty());
    out
}

/// `class X extends Y implements Z`, `interface`, `trait`, `enum E: string`.
pub(super) fn type_decl(
    src: &Src,
    st: &mut State,
    ts: usize,
    te: usize,
    word: &str,
    class: Option<&str>,
) -> Option<(Frame, usize)> {
    let code = src.code();
    // `new class(...)`, `X::class`, `function class()` are not declarations.
    if let Some((_, "new" | "function")) = ident_before(code, ts) {
        return None;
    }
    let (ns, name) = lex::ident_after(code, te)?;
    if name.starts_with('$') {
        return None;
    }
    let ne = ns + name.len();
    let kind = match word {
        "interface" => SymbolKind::Interface,
        "trait" => SymbolKind::Trait,
        "enum" => SymbolKind::Enum,
        _ => SymbolKind::Class,
    };
    let (head, attrs) = decl_head(src, ts);
    let line = src.line_of(ns);
    let class_route = route_attrs(src, &attrs)
        .into_iter()
        .chain(route_annotations(src, head))
        .next();
    let prefix = class_route
        .as_ref()
        .map_or(String::new(), |r| r.path.clone());
    push_decl(src, st, (name, kind), (line, line), (head, &attrs), class);
    Some((
        Frame {
            kind: if kind == SymbolKind::Enum {
                FrameKind::Enum
            } else {
                FrameKind::Type
            },
            symbol: Some(st.facts.symbols.len() - 1),
            type_name: Some(name.to_string()),
            route_prefix: prefix,
            class_route,
        },
        ne,
    ))
}

/// `implements A, B\C` of a pending class: RoadRunner gRPC servers implement
/// `<Svc>Interface` (in a file using `Spiral\RoadRunner\GRPC`). Returns where the list ends.
pub(super) fn implements_list(
    src: &Src,
    st: &mut State,
    after: usize,
    class: &str,
    line: u32,
) -> usize {
    let code = src.code();
    let mut at = after;
    for _ in 0..64 {
        let Some((s, e)) = qualified_name(code, at) else {
            break;
        };
        let iface = code[s..e].rsplit('\\').next().unwrap_or("");
        if st.roadrunner
            && let Some(svc) = iface.strip_suffix("Interface")
            && !svc.is_empty()
            && svc != "Service"
        {
            script::push_grpc_server(&mut st.facts, svc, class, line);
        }
        at = e;
        match lex::next_non_space(code, e) {
            Some((p, b',')) => at = p + 1,
            _ => break,
        }
    }
    at
}

/// `function name(…)` (top level or in a type); closures have no name and open no frame.
pub(super) fn function_decl(
    src: &Src,
    st: &mut State,
    ts: usize,
    te: usize,
    frames: &[Frame],
    class: Option<&str>,
) -> Option<(Frame, usize)> {
    let code = src.code();
    let mut at = te;
    if let Some((p, b'&')) = lex::next_non_space(code, at) {
        at = p + 1;
    }
    let (ns, name) = lex::ident_after(code, at)?;
    if name.starts_with('$') {
        return None;
    }
    let ne = ns + name.len();
    let (open, c) = lex::next_non_space(code, ne)?;
    if c != b'(' {
        return None;
    }
    src.br.close_of(open)?;
    let in_type = frames
        .last()
        .is_some_and(|f| matches!(f.kind, FrameKind::Type | FrameKind::Enum));
    let kind = match (in_type, name) {
        (true, "__construct") => SymbolKind::Constructor,
        (true, _) => SymbolKind::Method,
        (false, _) => SymbolKind::Function,
    };
    let (head, attrs) = decl_head(src, ts);
    let line = src.line_of(ns);
    if in_type {
        let frame = frames.last();
        let prefix = frame.map_or("", |f| f.route_prefix.as_str());
        let mut found = route_attrs(src, &attrs);
        found.extend(route_annotations(src, head));
        let prefix_of = |r: &RouteDecl| join(prefix, &r.path);
        let mut routes: Vec<(RouteDecl, String)> = found
            .into_iter()
            .map(|r| (r.clone(), prefix_of(&r)))
            .collect();
        // An invokable controller with only a class-level route is served there.
        if routes.is_empty()
            && name == "__invoke"
            && let Some(r) = frame.and_then(|f| f.class_route.as_ref())
        {
            routes.push((r.clone(), join("", &r.path)));
        }
        for (r, full) in routes {
            let methods = if r.methods.is_empty() {
                vec!["ANY".to_string()]
            } else {
                r.methods
            };
            let handler = match class {
                Some(c) => format!("{c}::{name}"),
                None => name.to_string(),
            };
            push_routes(&mut st.facts, methods, &full, Some(handler), r.line);
        }
    }
    let idx = push_decl(src, st, (name, kind), (line, line), (head, &attrs), class);
    // The walk goes on through the parameters (promoted properties) to the body's `{`, or to
    // the `;` of an abstract/interface method, which closes the pending frame.
    Some((
        Frame {
            kind: FrameKind::Function,
            symbol: Some(idx),
            ..Frame::default()
        },
        ne,
    ))
}

/// A member statement of a class or enum body (`const …;`, `case …;`): where its keyword ends,
/// where the statement ends, its declaration head ([`decl_head`]) and the class it is in.
pub(super) struct Member<'c> {
    te: usize,
    end: usize,
    head: (usize, Vec<(usize, usize)>),
    class: Option<&'c str>,
}

impl<'c> Member<'c> {
    /// The member whose keyword spans `ts..te`, in `class`.
    pub(super) fn new(src: &Src, ts: usize, te: usize, class: Option<&'c str>) -> Self {
        Member {
            te,
            end: statement_end(src.code(), te),
            head: decl_head(src, ts),
            class,
        }
    }

    /// Records the symbol `name` of `kind` the member declares over `lines`.
    fn push_symbol(&self, src: &Src, st: &mut State, decl: (&str, SymbolKind), lines: (u32, u32)) {
        let (head, attrs) = (self.head.0, self.head.1.as_slice());
        push_decl(src, st, decl, lines, (head, attrs), self.class);
    }

    /// Records the value the member gives `name` (`Class.NAME` inside a class).
    fn push_binding(&self, st: &mut State, name: &str, value: Value, line: u32) {
        st.facts.bindings.push(Binding {
            name: match self.class {
                Some(c) => format!("{c}.{name}"),
                None => name.to_string(),
            },
            value,
            line,
        });
    }
}

/// `const A = 'x', B = 'y';` (typed `const string A = 'x';` too). Returns where it ends.
pub(super) fn const_decl(src: &Src, st: &mut State, m: &Member) -> usize {
    let code = src.code();
    for (a, z) in common::split_top(code, m.te, m.end, b',', &src.br) {
        let Some(eq) = code[a..z].find('=').map(|p| a + p) else {
            continue;
        };
        let Some((ns, name)) = ident_before(code, eq) else {
            continue;
        };
        let line = src.line_of(ns);
        m.push_symbol(
            src,
            st,
            (name, SymbolKind::Constant),
            (line, src.line_of(z)),
        );
        if let value = src.value(eq + 1, z, m.class)
            && !value.is_dynamic()
        {
            m.push_binding(st, name, value, line);
        }
    }
    m.end
}

/// `case NAME = 'value';` / `case NAME;` in an enum.
pub(super) fn case_decl(src: &Src, st: &mut State, m: &Member) -> usize {
    let code = src.code();
    let end = m.end;
    let Some((ns, name)) = lex::ident_after(code, m.te).filter(|(p, _)| *p < end) else {
        return end;
    };
    let line = src.line_of(ns);
    m.push_symbol(src, st, (name, SymbolKind::EnumValue), (line, line));
    if let Some(eq) = code[ns..end].find('=').map(|p| ns + p)
        && let Some(value) = src.plain_string(eq + 1, end)
    {
        m.push_binding(st, name, Value::lit(value), line);
    }
    end
}

/// `new X(…)`: gRPC clients, Guzzle clients and rdkafka handles, bound to the variable or
/// property they are assigned to.
pub(super) fn new_expr(src: &Src, st: &mut State, ts: usize, te: usize) {
    let code = src.code();
    let Some((ns, ne)) = qualified_name(code, te) else {
        return;
    };
    let class = code[ns..ne].trim_start_matches('\\');
    let last = class.rsplit('\\').next().unwrap_or(class);
    let target = assigned_target(src, ts);
    let key = target.as_ref().and_then(|c| c.key().map(str::to_string));
    if st.grpc_file
        && let Some(svc) = grpc_client_service(last)
    {
        if let Some(k) = &key {
            st.grpc_clients.insert(k.clone(), svc.to_string());
        }
        st.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: key,
            line: src.line_of(ns),
        });
        return;
    }
    let Some(k) = key else { return };
    match class {
        "GuzzleHttp\\Client" | "Client" | "HttpClient" if !st.grpc_file || class != "Client" => {
            // `new Client(['base_uri' => 'http://pricing:8080'])`: relative request URLs
            // are resolved against it.
            if let Some((open, b'(')) = lex::next_non_space(code, ne)
                && let Some(close) = src.br.close_of(open)
                && let Some(&(a, z)) = src.args(open, close).positional.first()
            {
                for (x, y) in src.items(a, z) {
                    if let Some(arrow) = code[x..y].find("=>")
                        && matches!(
                            src.plain_string(x, x + arrow).as_deref(),
                            Some("base_uri" | "base_url")
                        )
                    {
                        st.http_bases.insert(k.clone(), (x + arrow + 2, y));
                    }
                }
            }
            st.http_clients.insert(k);
        }
        "RdKafka\\Producer" | "Producer" => {
            st.kafka.insert(k, false);
        }
        "RdKafka\\Consumer" | "RdKafka\\KafkaConsumer" | "KafkaConsumer" | "Consumer" => {
            st.kafka.insert(k, true);
        }
        _ => {}
    }
}

/// `OrderServiceClient` gives `OrderService` (not HTTP or Guzzle clients).
pub(super) fn grpc_client_service(class: &str) -> Option<&str> {
    let svc = class.strip_suffix("Client")?;
    let generic = matches!(
        svc,
        "" | "Http" | "Guzzle" | "Soap" | "Redis" | "Base" | "Abstract" | "Grpc" | "Kafka"
    );
    (!generic && svc.as_bytes()[0].is_ascii_uppercase()).then_some(svc)
}

/// The variable/property an expression starting at `at` is assigned to (`$x = …`,
/// `$this->x = …`).
pub(super) fn assigned_target<'c>(src: &'c Src, at: usize) -> Option<Chain<'c>> {
    let code = src.code();
    let b = code.as_bytes();
    let (eq, _) = lex::prev_non_space(code, at).filter(|&(_, c)| c == b'=')?;
    if eq > 0 && matches!(b[eq - 1], b'=' | b'!' | b'<' | b'>' | b'?' | b'.') {
        return None;
    }
    let (p, _) = lex::prev_non_space(code, eq)?;
    let chain = chain_before(code, &src.br, p + 1);
    (!chain.text.is_empty()).then_some(chain)
}
