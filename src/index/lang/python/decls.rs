//! The declaration pass over the statements: classes and functions with their decorators
//! (FastAPI/Flask routes), docs and scopes, `import` / `from … import` and `with` blocks.

use super::bindings::{assignment, bind, receiver_key};
use super::*;

/// Pass one: declarations, imports, constants, decorators and name bindings.
pub(super) fn declarations(src: &Src, st: &mut State) {
    let code = src.code();
    let stmts = statements(src);
    let mut scopes: Vec<Scope> = Vec::new();
    let mut decorators: Vec<Stmt> = Vec::new();
    let mut prev_end_line = 0;
    for stmt in &stmts {
        while let Some(top) = scopes.last() {
            if stmt.indent > top.indent {
                break;
            }
            if let Some(sym) = st.facts.symbols.get_mut(top.symbol) {
                sym.end_line = prev_end_line.max(sym.line);
            }
            scopes.pop();
        }
        st.current_def = scopes.last().filter(|s| !s.is_class).map(|s| s.symbol);
        let text = &code[stmt.start..stmt.end];
        if text.starts_with('@') {
            decorators.push(*stmt);
            prev_end_line = stmt.end_line;
            continue;
        }
        let pending = std::mem::take(&mut decorators);
        let Some((wpos, word)) = ident_after(code, stmt.start).filter(|(p, _)| *p == stmt.start)
        else {
            prev_end_line = stmt.end_line;
            continue;
        };
        let word_end = wpos + word.len();
        let header = Header {
            stmt,
            scopes: &scopes,
            decorators: &pending,
        };
        match word {
            "class" => {
                if let Some(scope) = class_decl(src, st, &header, word_end) {
                    scopes.push(scope);
                }
            }
            "def" => {
                if let Some(scope) = def_decl(src, st, &header, word_end) {
                    scopes.push(scope);
                }
            }
            "async" => match ident_after(code, word_end) {
                Some((p, "def")) => {
                    if let Some(scope) = def_decl(src, st, &header, p + 3) {
                        scopes.push(scope);
                    }
                }
                Some((p, "with")) => with_stmt(src, st, stmt, p + 4),
                _ => {}
            },
            "import" => import_stmt(src, st, stmt, word_end),
            "from" => from_import_stmt(src, st, stmt, word_end),
            "with" => with_stmt(src, st, stmt, word_end),
            "type" if ident_after(code, word_end).is_some() && text.contains('=') => {
                if let Some((np, name)) = ident_after(code, word_end) {
                    st.facts.symbols.push(Symbol {
                        name: name.to_string(),
                        kind: SymbolKind::TypeAlias,
                        line: src.line_of(np),
                        end_line: stmt.end_line,
                        doc_line: src.lx.doc_comment_above(stmt.line),
                        container: scopes.last().map(|s| s.name.clone()),
                    });
                }
            }
            w if KEYWORDS.contains(&w) => {}
            _ => assignment(src, st, stmt, &scopes),
        }
        prev_end_line = stmt.end_line;
    }
    for top in scopes.iter().rev() {
        if let Some(sym) = st.facts.symbols.get_mut(top.symbol) {
            sym.end_line = prev_end_line.max(sym.line);
        }
    }
}

/// The doc line of a declaration: a `#` comment block above its decorators (or above it),
/// else its first decorator line.
pub(super) fn doc_line(src: &Src, decl_line: u32, decorators: &[Stmt]) -> Option<u32> {
    let first = decorators.first().map(|d| d.line);
    src.lx
        .doc_comment_above(first.unwrap_or(decl_line))
        .or(first)
}

/// A `class` or `def` statement with what surrounds it.
pub(super) struct Header<'h> {
    stmt: &'h Stmt,
    /// The scopes it is declared in.
    scopes: &'h [Scope],
    /// The decorators above it.
    decorators: &'h [Stmt],
}

impl Header<'_> {
    /// Declares `name` (at `np`) as a symbol of `kind` in the innermost scope, and opens its
    /// scope (a class's when `is_class`).
    fn open(
        &self,
        src: &Src,
        st: &mut State,
        (np, name): (usize, &str),
        kind: SymbolKind,
        is_class: bool,
    ) -> Scope {
        st.facts.symbols.push(Symbol {
            name: name.to_string(),
            kind,
            line: src.line_of(np),
            end_line: self.stmt.end_line,
            doc_line: doc_line(src, self.stmt.line, self.decorators),
            container: self.scopes.last().map(|s| s.name.clone()),
        });
        Scope {
            indent: self.stmt.indent,
            symbol: st.facts.symbols.len() - 1,
            name: name.to_string(),
            is_class,
            is_enum: kind == SymbolKind::Enum,
        }
    }
}

pub(super) fn class_decl(src: &Src, st: &mut State, h: &Header, after_kw: usize) -> Option<Scope> {
    let stmt = h.stmt;
    let code = src.code();
    let (np, name) = ident_after(code, after_kw)?;
    let mut at = np + name.len();
    // PEP 695 type parameters: `class Box[T](Base):`.
    if let Some((p, b'[')) = lex::next_non_space(code, at)
        && let Some(c) = src.br.close_of(p)
    {
        at = c + 1;
    }
    let mut bases: Vec<&str> = Vec::new();
    if let Some((p, b'(')) = lex::next_non_space(code, at)
        && p < stmt.end
        && let Some(c) = src.br.close_of(p)
    {
        for (s, e) in common::split_top(code, p + 1, c, b',', &src.br) {
            if let Some(b) = src.dotted(s, e) {
                bases.push(b);
            } else if let Some(b) = code[s..e]
                .split('[')
                .next()
                .and_then(|h| src.dotted(s, s + h.len()))
            {
                bases.push(b); // `Generic[T]`, `Protocol[T]`
            }
        }
    }
    let last = |b: &&str| b.rsplit('.').next().unwrap_or(b).to_string();
    let base_names: Vec<String> = bases.iter().map(last).collect();
    let is_enum = base_names.iter().any(|b| ENUM_BASES.contains(&b.as_str()));
    let kind = if is_enum {
        SymbolKind::Enum
    } else if base_names.iter().any(|b| b == "Protocol") {
        SymbolKind::Interface
    } else {
        SymbolKind::Class
    };
    let line = src.line_of(np);
    for b in &base_names {
        if let Some(svc) = b.strip_suffix("Servicer")
            && !svc.is_empty()
        {
            script::push_grpc_server(&mut st.facts, svc, name, line);
        }
    }
    Some(h.open(src, st, (np, name), kind, true))
}

pub(super) fn def_decl(src: &Src, st: &mut State, h: &Header, after_kw: usize) -> Option<Scope> {
    let code = src.code();
    let (np, name) = ident_after(code, after_kw)?;
    let in_class = h.scopes.last().is_some_and(|s| s.is_class);
    let kind = match (in_class, name) {
        (true, "__init__") => SymbolKind::Constructor,
        (true, _) => SymbolKind::Method,
        (false, _) => SymbolKind::Function,
    };
    let scope = h.open(src, st, (np, name), kind, false);
    for d in h.decorators {
        route_decorator(src, st, d, name);
    }
    Some(scope)
}

/// `@app.route("/x", methods=[…])`, `@bp.get("/x")`, `@router.post("/{id}")`.
pub(super) fn route_decorator(src: &Src, st: &mut State, d: &Stmt, handler: &str) {
    let Some((callee, open, close)) = src.call(d.start + 1, d.end) else {
        return;
    };
    let Some((receiver, verb)) = callee.rsplit_once('.') else {
        return;
    };
    let methods: Vec<String> = if ROUTE_VERBS.contains(&verb) {
        vec![verb.to_ascii_uppercase()]
    } else if verb == "route" || verb == "api_route" {
        Vec::new()
    } else {
        return;
    };
    let args = src.args(open, close);
    let Some(path) = args
        .first_or(&["rule", "path"])
        .and_then(|(s, e)| src.plain_string(s, e))
    else {
        return;
    };
    if !(path.is_empty() || path.starts_with('/')) {
        return;
    }
    let methods = if methods.is_empty() {
        src.listed_methods(&args)
    } else {
        methods
    };
    let receiver = receiver_key(receiver);
    st.push_routes(receiver, methods, &path, Some(handler.to_string()), d.line);
}

pub(super) fn import_stmt(src: &Src, st: &mut State, stmt: &Stmt, after_kw: usize) {
    let code = src.code();
    for (s, e) in common::split_top(code, after_kw, stmt.end, b',', &src.br) {
        let item = &code[s..e];
        let (module, alias) = match item.split_once(" as ") {
            Some((m, a)) => (m.trim(), Some(a.trim().to_string())),
            None => (item.trim(), None),
        };
        if module.is_empty()
            || src
                .dotted(s, s + item.find(" as ").unwrap_or(item.len()))
                .is_none()
        {
            continue;
        }
        st.facts
            .imports
            .push(Import::whole_module(module.to_string(), alias, stmt.line));
    }
}

pub(super) fn from_import_stmt(src: &Src, st: &mut State, stmt: &Stmt, after_kw: usize) {
    let code = src.code();
    let Some(kw) = lex::find_word(&code[after_kw..stmt.end], "import")
        .next()
        .map(|p| after_kw + p)
    else {
        return;
    };
    let module: String = code[after_kw..kw]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if module.is_empty() || !module.bytes().all(|b| is_ident_byte(b) || b == b'.') {
        return;
    }
    let (mut s, mut e) = src.trim(kw + 6, stmt.end);
    let b = code.as_bytes();
    if s < e && b[s] == b'(' {
        s += 1;
        if b[e - 1] == b')' {
            e -= 1;
        }
    }
    let mut names = Vec::new();
    let mut renamed = Vec::new();
    let mut explicit_reexport = false;
    for (a, z) in common::split_top(code, s, e, b',', &src.br) {
        let item = code[a..z].trim();
        if item == "*" {
            continue;
        }
        let (name, alias) = match item.split_once(" as ") {
            Some((n, al)) => (n.trim(), Some(al.trim())),
            None => (item, None),
        };
        if name.is_empty() || !name.bytes().all(is_ident_byte) {
            continue;
        }
        explicit_reexport |= alias == Some(name);
        if let Some(local) = alias.filter(|a| *a != name && a.bytes().all(is_ident_byte)) {
            renamed.push((name.to_string(), local.to_string()));
        }
        names.push(name.to_string());
    }
    let reexport = explicit_reexport || (st.is_init && module.starts_with('.'));
    st.facts.imports.push(Import {
        module,
        names,
        alias: None,
        line: stmt.line,
        reexport,
        renamed,
    });
}

/// `with grpc.insecure_channel(t) as ch, httpx.Client() as c:` binds each `as` name.
pub(super) fn with_stmt(src: &Src, st: &mut State, stmt: &Stmt, after_kw: usize) {
    let code = src.code();
    // The header ends at the last top-level `:`.
    let header_end = {
        let mut end = stmt.end;
        let b = code.as_bytes();
        let mut i = after_kw;
        while i < stmt.end {
            if matches!(b[i], b'(' | b'[' | b'{') {
                match src.br.close_of(i) {
                    Some(c) if c < stmt.end => i = c + 1,
                    _ => i += 1,
                }
                continue;
            }
            if b[i] == b':' {
                end = i;
                break;
            }
            i += 1;
        }
        end
    };
    for (s, e) in common::split_top(code, after_kw, header_end, b',', &src.br) {
        if let Some(p) = top_word(code, s, e, "as", &src.br)
            && let Some(name) = src.dotted(p + 2, e)
        {
            bind(src, st, name, s, p);
        }
    }
}
