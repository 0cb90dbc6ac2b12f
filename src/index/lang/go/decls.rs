//! The top-level declaration walk: functions and methods, types and interface methods,
//! `var`/`const` specs and imports; function bodies skipped whole.

use super::*;

impl<'t, 'a> Go<'t, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // Declarations
    // -----------------------------------------------------------------------------------------

    pub(super) fn declarations(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut i = 0;
        while i < n {
            i = match t.ident(i) {
                Some("package") if t.first_on_line(i) => {
                    if let Some(name) = t.ident(i + 1)
                        && self.facts.package.is_none()
                    {
                        self.facts.package = Some(name.to_string());
                    }
                    i + 2
                }
                Some("import") => self.imports(i + 1),
                Some("func") => self.func(i),
                Some("type") => self.type_decl(i),
                Some(kw @ ("const" | "var")) => self.value_decl(i, kw == "const"),
                _ => t.skip_group(i),
            };
        }
        for name in std::mem::take(&mut self.enum_types) {
            for s in &mut self.facts.symbols {
                if s.name == name && s.kind == SymbolKind::TypeAlias && s.container.is_none() {
                    s.kind = SymbolKind::Enum;
                }
            }
        }
    }

    pub(super) fn doc_line(&self, line: u32) -> Option<u32> {
        self.t.lx.doc_comment_above(line)
    }

    pub(super) fn push_symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        line: u32,
        end_line: u32,
        doc_from: u32,
        container: Option<&str>,
    ) {
        let doc_line = self.doc_line(doc_from);
        let container = container.map(str::to_string);
        self.facts
            .push_symbol(name, kind, (line, end_line), doc_line, container);
    }

    pub(super) fn imports(&mut self, j: usize) -> usize {
        let t = self.t;
        if t.is_punct(j, b'(') {
            let end = t.close(j).unwrap_or(t.len());
            let mut k = j + 1;
            while k < end {
                k = self.import_spec(k, end);
            }
            return end + 1;
        }
        self.import_spec(j, t.len())
    }

    /// `[alias] "path"`; returns the index after it.
    pub(super) fn import_spec(&mut self, k: usize, limit: usize) -> usize {
        let t = self.t;
        let (alias, s) = if t.is_str(k) {
            (None, k)
        } else if (t.ident(k).is_some() || t.is_punct(k, b'.')) && t.is_str(k + 1) && k + 1 < limit
        {
            (Some(t.text(k)), k + 1)
        } else {
            return k + 1;
        };
        if let Some(module) = t.str_value(s) {
            self.facts.imports.push(Import::whole_module(
                module.into_owned(),
                alias.map(str::to_string),
                t.line(s),
            ));
        }
        s + 1
    }

    /// `func [(recv)] Name[T any](params) results { body }`; returns the index after it.
    pub(super) fn func(&mut self, i: usize) -> usize {
        let t = self.t;
        let n = t.len();
        let mut j = i + 1;
        let mut container = None;
        let mut recv = None;
        if t.is_punct(j, b'(') {
            let close = t.close(j).unwrap_or(n);
            let mut k = j + 1;
            while k < close {
                if t.is_punct(k, b'[') {
                    k = t.skip_group(k);
                    continue;
                }
                if let Some(id) = t.ident(k) {
                    container = Some(id);
                }
                k += 1;
            }
            recv = Some((j, close));
            j = close + 1;
        }
        let Some(name) = t.ident(j) else {
            return j.max(i + 1);
        };
        let name_tok = j;
        j += 1;
        if t.is_punct(j, b'[') {
            j = t.skip_group(j);
        }
        let mut params = None;
        if t.is_punct(j, b'(') {
            let close = t.close(j).unwrap_or(n);
            params = Some((j, close));
            j = close + 1;
        }
        // Results, then the body: Go puts `{` on the signature's last line, so a token that
        // starts a line ends a body-less declaration.
        let mut result = None;
        let mut body = None;
        let mut k = j;
        while k < n && !t.first_on_line(k) {
            if t.is_punct(k, b'{') {
                if t.is(k - 1, "interface") || t.is(k - 1, "struct") {
                    k = t.skip_group(k);
                    continue;
                }
                body = Some((k, t.close(k).unwrap_or(n)));
                break;
            }
            if k == j {
                result = self.local_type_at(if t.is_punct(k, b'(') { k + 1 } else { k });
            }
            k = t.skip_group(k);
        }
        let line = t.line(name_tok);
        let end_line = match body {
            Some((open, _)) => t.group_end_line(open),
            None => t.line(k.saturating_sub(1).max(name_tok)),
        };
        let kind = if recv.is_some() {
            SymbolKind::Method
        } else {
            SymbolKind::Function
        };
        let container = recv.and(container);
        self.push_symbol(name, kind, line, end_line, t.line(i), container);
        if recv.is_none() {
            self.func_by_name.insert(name, self.funcs.len());
        }
        self.funcs.push(Func {
            start: i,
            params,
            body,
            result,
        });
        match body {
            Some((open, _)) => t.skip_group(open),
            None => k.max(i + 1),
        }
    }

    /// The type named at `k` when it is local: `T`, `*T` (not `pkg.T`).
    pub(super) fn local_type_at(&self, k: usize) -> Option<&'a str> {
        let t = self.t;
        let k = if t.is_punct(k, b'*') || t.is_punct(k, b'&') {
            k + 1
        } else {
            k
        };
        let id = t.ident(k)?;
        (!t.is_punct(k + 1, b'.') && !is_keyword(id)).then_some(id)
    }

    pub(super) fn type_decl(&mut self, i: usize) -> usize {
        let t = self.t;
        if t.is_punct(i + 1, b'(') {
            let end = t.close(i + 1).unwrap_or(t.len());
            let mut k = i + 2;
            while k < end {
                k = if t.ident(k).is_some() {
                    self.type_spec(k, end, t.line(k))
                } else {
                    t.skip_group(k)
                };
            }
            return end + 1;
        }
        self.type_spec(i + 1, t.len(), t.line(i))
    }

    /// `Name[T any] [=] Type`; returns the index after it.
    pub(super) fn type_spec(&mut self, k: usize, limit: usize, decl_line: u32) -> usize {
        let t = self.t;
        let Some(name) = t.ident(k) else {
            return k + 1;
        };
        let line = t.line(k);
        let mut j = k + 1;
        if t.is_punct(j, b'[') && self.is_type_params(j) {
            j = t.skip_group(j);
        }
        if t.is_punct(j, b'=') {
            j += 1;
        }
        if (t.is(j, "struct") || t.is(j, "interface")) && t.is_punct(j + 1, b'{') {
            let open = j + 1;
            let kind = if t.is(j, "struct") {
                self.structs.push((open, t.close(open).unwrap_or(t.len())));
                SymbolKind::Struct
            } else {
                SymbolKind::Interface
            };
            self.push_symbol(name, kind, line, t.group_end_line(open), decl_line, None);
            if kind == SymbolKind::Interface {
                self.interface_methods(open, name);
            }
            return t.skip_group(open);
        }
        let e = self.stmt_end(j, limit).max(k + 1);
        let end_line = t.end_line(e - 1);
        self.push_symbol(name, SymbolKind::TypeAlias, line, end_line, decl_line, None);
        e
    }

    /// `[T any]`, `[K comparable, V any]` (type parameters) rather than `[N]` (an array).
    pub(super) fn is_type_params(&self, open: usize) -> bool {
        let t = self.t;
        t.ident(open + 1).is_some() && !t.is_punct(open + 2, b']') && t.close(open).is_some()
    }

    pub(super) fn interface_methods(&mut self, open: usize, container: &str) {
        let t = self.t;
        let end = t.close(open).unwrap_or(t.len());
        let mut k = open + 1;
        while k < end {
            if t.first_on_line(k)
                && let Some(name) = t.ident(k)
                && t.is_punct(k + 1, b'(')
            {
                let e = self.stmt_end(k, end).max(k + 1);
                let line = t.line(k);
                self.push_symbol(
                    name,
                    SymbolKind::Method,
                    line,
                    t.end_line(e - 1),
                    line,
                    Some(container),
                );
                k = e;
            } else {
                k = t.skip_group(k);
            }
        }
    }

    /// `const`/`var`, single or grouped; returns the index after it.
    pub(super) fn value_decl(&mut self, i: usize, is_const: bool) -> usize {
        let t = self.t;
        if t.is_punct(i + 1, b'(') {
            let end = t.close(i + 1).unwrap_or(t.len());
            let mut k = i + 2;
            let mut enum_type: Option<Option<&'a str>> = None;
            while k < end {
                k = if t.ident(k).is_some() {
                    self.value_spec(k, end, is_const, t.line(k), &mut enum_type)
                } else {
                    t.skip_group(k)
                };
            }
            return end + 1;
        }
        let mut none = Some(None);
        self.value_spec(i + 1, t.len(), is_const, t.line(i), &mut none)
    }

    /// One `a, b T = x, y` spec. `enum_type` is the group's iota state: `None` before the first
    /// spec, then `Some(Some(T))` for an iota block typed `T`.
    pub(super) fn value_spec(
        &mut self,
        k: usize,
        limit: usize,
        is_const: bool,
        decl_line: u32,
        enum_type: &mut Option<Option<&'a str>>,
    ) -> usize {
        let t = self.t;
        let e = self.stmt_end(k, limit).max(k + 1);
        let mut names = Vec::new();
        let mut j = k;
        while j < e {
            let Some(id) = t.ident(j) else { break };
            names.push((j, id));
            j += 1;
            if t.is_punct(j, b',') {
                j += 1;
            } else {
                break;
            }
        }
        let eq = (j..e).find(|&x| t.is_punct(x, b'='));
        let type_end = eq.unwrap_or(e);
        let type_name = match type_end.saturating_sub(j) {
            1 => t.ident(j),
            3 if t.is_punct(j + 1, b'.') => t.ident(j + 2),
            _ => None,
        };
        let values: Vec<(usize, usize)> = match eq {
            Some(eq) => split_commas(t, eq + 1, e),
            None => Vec::new(),
        };
        let has_iota = values.iter().any(|&(a, b)| (a..b).any(|x| t.is(x, "iota")));
        let group_type = match *enum_type {
            None => {
                let ty = if is_const && has_iota {
                    type_name
                } else {
                    None
                };
                *enum_type = Some(ty);
                if let Some(ty) = ty {
                    self.enum_types.push(ty);
                }
                ty
            }
            Some(ty) => ty,
        };
        let implicit = eq.is_none() && type_end == j;
        let end_line = t.end_line(e - 1);
        for (idx, &(tok, name)) in names.iter().enumerate() {
            if name == "_" {
                continue;
            }
            let line = t.line(tok);
            let (kind, container) = match group_type {
                Some(ty) if is_const && (implicit || type_name == Some(ty)) => {
                    (SymbolKind::EnumValue, Some(ty))
                }
                _ if is_const => (SymbolKind::Constant, None),
                _ => (SymbolKind::Variable, None),
            };
            let doc_from = if idx == 0 { decl_line } else { line };
            self.push_symbol(name, kind, line, end_line, doc_from, container);
            // Every value the evaluator reads is a binding (an env lookup keeps its default for
            // the graph); an iota counter is a number, not a value anything resolves to.
            if names.len() == values.len()
                && !(values[idx].0..values[idx].1).any(|x| t.kw(x, "iota"))
                && let value = self.value(values[idx])
                && !value.is_dynamic()
            {
                self.facts.bindings.push(Binding {
                    name: name.to_string(),
                    value,
                    line,
                });
            }
        }
        e
    }

    /// The end (exclusive) of the statement starting at `start`: a `;`, a closer of an outer
    /// group, `limit`, or a line break after a token that cannot continue an expression.
    pub(super) fn stmt_end(&self, start: usize, limit: usize) -> usize {
        let t = self.t;
        let mut k = start;
        while k < limit {
            if matches!(t.punct(k), b';' | b')' | b']' | b'}') {
                return k;
            }
            let next = t.skip_group(k).clamp(k + 1, limit);
            if next >= limit {
                return limit;
            }
            if t.line(next) > t.line(next - 1) && !continues(t, next - 1) {
                return next;
            }
            k = next;
        }
        limit
    }
}
