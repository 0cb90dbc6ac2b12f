//! Declarations: `class`/`module`/`def` and the blocks they open, `require`s, mixins and
//! constants, read from the first words of a statement.

use super::*;

/// `class Name < Super`, `class << self`, `module Name`.
pub(super) fn type_decl(
    src: &Src,
    st: &mut State,
    stmt: &Stmt,
    toks: &[(usize, usize)],
    ctx: Ctx,
) -> Option<(usize, Block)> {
    let code = src.code();
    let (ks, ke) = toks[0];
    let is_class = &code[ks..ke] == "class";
    if is_class && code[ke..stmt.end].trim_start().starts_with("<<") {
        return Some((ks, Block { symbol: None, ctx }));
    }
    let (ns, ne) = const_path(code, ke)?;
    let name = &code[ns..ne];
    let line = src.line_of(ns);
    if is_class && let Some(rest) = code[ne..stmt.end].trim_start().strip_prefix('<') {
        let off = stmt.end - rest.len();
        if let Some((ss, se)) = const_path(code, off) {
            let sup = code[ss..se].trim_start_matches("::");
            let mut segs = sup.rsplit("::");
            if segs.next() == Some("Service")
                && let Some(svc) = segs.next()
            {
                script::push_grpc_server(&mut st.facts, svc, name, line);
            }
        }
    }
    st.facts.symbols.push(Symbol {
        name: name.to_string(),
        kind: if is_class {
            SymbolKind::Class
        } else {
            SymbolKind::Module
        },
        line,
        end_line: line,
        doc_line: src.lx.doc_comment_above(stmt.line),
        container: container_name(st, ctx).map(str::to_string),
    });
    let idx = st.facts.symbols.len() - 1;
    Some((
        ks,
        Block {
            symbol: Some(idx),
            ctx: Ctx {
                container: Some(idx),
                def: None,
                ..ctx
            },
        },
    ))
}

/// A constant path (`A::B::C`, `::Top`) starting at or after `at`: its range.
pub(super) fn const_path(code: &str, at: usize) -> Option<(usize, usize)> {
    let b = code.as_bytes();
    let mut i = at;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let start = i;
    loop {
        if b[i..].starts_with(b"::") {
            i += 2;
        }
        let (s, id) = ident_after(code, i).filter(|(s, _)| *s == i)?;
        i = s + id.len();
        if !b[i..].starts_with(b"::") || !b.get(i + 2).is_some_and(|&c| is_ident_byte(c)) {
            break;
        }
    }
    (i > start).then_some((start, i))
}

/// `def name`, `def self.name`, `def name?`, `def name=(v)`, `def ==(o)`, endless
/// `def name = expr`. Returns the block and whether the def is endless.
pub(super) fn def_decl(
    src: &Src,
    st: &mut State,
    stmt: &Stmt,
    after_def: usize,
    ctx: Ctx,
) -> Option<(Block, bool)> {
    let code = src.code();
    let b = code.as_bytes();
    let mut i = after_def;
    while i < stmt.end && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let name_start = i;
    // `self.` / `Const.` singleton prefix.
    if let Some((s, id)) = ident_after(code, i).filter(|(s, _)| *s == i)
        && b.get(s + id.len()) == Some(&b'.')
    {
        i = s + id.len() + 1;
    }
    let ns = i;
    let ne = match ident_after(code, i).filter(|(s, _)| *s == i) {
        Some((s, id)) => {
            let mut e = s + id.len();
            match b.get(e) {
                Some(b'?' | b'!') => e += 1,
                Some(b'=') if b.get(e + 1) == Some(&b'(') => e += 1,
                _ => {}
            }
            e
        }
        None => {
            // Operator methods: `==`, `[]`, `<=>`, `+@`.
            let mut e = i;
            while e < stmt.end && !b[e].is_ascii_whitespace() && b[e] != b'(' && b[e] != b';' {
                e += 1;
            }
            e
        }
    };
    if ne == ns || name_start >= stmt.end {
        return None;
    }
    let name = &code[ns..ne];
    let mut after = ne;
    if let Some((p, b'(')) = lex::next_non_space(code, ne)
        && p == ne
        && let Some(c) = src.br.close_of(p)
    {
        after = c + 1;
    }
    let endless = matches!(
        lex::next_non_space(code, after),
        Some((p, b'=')) if p < stmt.end && !matches!(b.get(p + 1), Some(b'=' | b'~' | b'>'))
    );
    let container = container_name(st, ctx).map(str::to_string);
    let kind = match (&container, name) {
        (Some(_), "initialize") => SymbolKind::Constructor,
        (Some(_), _) => SymbolKind::Method,
        (None, _) => SymbolKind::Function,
    };
    let line = src.line_of(ns);
    st.facts.symbols.push(Symbol {
        name: name.to_string(),
        kind,
        line,
        end_line: if endless { src.line_of(stmt.end) } else { line },
        doc_line: src.lx.doc_comment_above(stmt.line),
        container,
    });
    let idx = st.facts.symbols.len() - 1;
    Some((
        Block {
            symbol: Some(idx),
            ctx: Ctx {
                def: Some(idx),
                ..ctx
            },
        },
        endless,
    ))
}

/// `require "x"`, `require_relative "../x"`, `autoload :Name, "path"`.
pub(super) fn require_stmt(src: &Src, st: &mut State, stmt: &Stmt, toks: &[(usize, usize)]) {
    let code = src.code();
    let (ks, ke) = toks[0];
    let mut s = ke;
    let mut e = stmt.end;
    if let Some((p, b'(')) = lex::next_non_space(code, ke)
        && let Some(c) = src.br.close_of(p)
    {
        s = p + 1;
        e = c;
    }
    let args = src.args(s, e);
    let autoload = &code[ks..ke] == "autoload";
    let (module_arg, names) = if autoload {
        let names: Vec<String> = args
            .positional
            .first()
            .and_then(|&(a, z)| src.plain_string(a, z))
            .into_iter()
            .collect();
        (args.positional.get(1).copied(), names)
    } else {
        (args.positional.first().copied(), Vec::new())
    };
    if let Some((a, z)) = module_arg
        && let Some(module) = src.plain_string(a, z)
    {
        st.facts.imports.push(Import {
            module,
            names,
            alias: None,
            line: stmt.line,
            reexport: false,
            renamed: Vec::new(),
        });
    }
}

/// `include Mod`, `extend Mod::Sub`, `prepend Mod`.
pub(super) fn mixin_stmt(src: &Src, st: &mut State, stmt: &Stmt, toks: &[(usize, usize)]) {
    let (_, ke) = toks[0];
    let args = src.args(ke, stmt.end);
    for (a, z) in args.positional {
        if let Some(name) = src
            .name(a, z)
            .filter(|n| n.as_bytes()[0].is_ascii_uppercase())
        {
            st.facts.imports.push(Import::whole_module(
                name.trim_start_matches("::").to_string(),
                None,
                src.line_of(a),
            ));
        }
    }
}

/// `NAME = value` (also `NAME ||= value`): a constant symbol, and a constant fact for a
/// string/symbol value or an environment default.
pub(super) fn constant_stmt(
    src: &Src,
    st: &mut State,
    stmt: &Stmt,
    toks: &[(usize, usize)],
    ctx: Ctx,
) {
    let code = src.code();
    let (ns, ne) = toks[0];
    let name = &code[ns..ne];
    let rest = code[ne..stmt.end].trim_start();
    let value_start = if let Some(r) = rest.strip_prefix("||=") {
        stmt.end - r.len()
    } else if let Some(r) = rest.strip_prefix('=') {
        if r.starts_with(['=', '~', '>']) {
            return;
        }
        stmt.end - r.len()
    } else {
        return;
    };
    let value = code[value_start..stmt.end].trim_start();
    let kind = if value.starts_with("Struct.new")
        || value.starts_with("Class.new")
        || value.starts_with("Data.define")
    {
        SymbolKind::Class
    } else if value.starts_with("Module.new") {
        SymbolKind::Module
    } else {
        SymbolKind::Constant
    };
    let container = container_name(st, ctx).map(str::to_string);
    let line = src.line_of(ns);
    let value = src.value(value_start, stmt.end);
    if !value.is_dynamic() {
        let qualified = match &container {
            Some(c) => format!("{}.{}", c.rsplit("::").next().unwrap_or(c), name),
            None => name.to_string(),
        };
        st.facts.bindings.push(Binding {
            name: qualified,
            value,
            line,
        });
    }
    st.facts.symbols.push(Symbol {
        name: name.to_string(),
        kind,
        line,
        end_line: src.line_of(stmt.end.saturating_sub(1).max(stmt.start)),
        doc_line: src.lx.doc_comment_above(stmt.line),
        container,
    });
}
