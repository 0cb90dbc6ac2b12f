//! The declaration walk: namespaces and classes on an explicit stack, enums and their values,
//! `typedef` and `using` aliases, gRPC service bases; function bodies skipped whole.

use super::*;

impl<'a> Cpp<'_, '_, 'a> {
    pub(super) fn decls(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut frames: Vec<Frame<'a>> = Vec::new();
        let mut head: Option<usize> = None;
        let mut i = 0;
        while i < n {
            if let Some(top) = frames.last()
                && i >= top.end
            {
                let end = top.end;
                frames.pop();
                if i == end {
                    i += 1;
                }
                head = None;
                continue;
            }
            let frame = frames.last().copied();
            let limit = frame.map_or(n, |f| f.end);
            if t.is(i, "template") && t.is_punct(i + 1, b'<') {
                head.get_or_insert(i);
                i = self.t.skip_generic_args(i + 1).max(i + 1);
                continue;
            }
            if t.is_punct(i, b'[') && t.is_punct(i + 1, b'[') {
                head.get_or_insert(i);
                i = t.skip_group(i);
                continue;
            }
            if matches!(
                t.ident(i),
                Some("public" | "private" | "protected" | "signals" | "slots" | "Q_SLOTS")
            ) {
                let mut j = i + 1;
                if t.is(j, "slots") || t.is(j, "Q_SLOTS") {
                    j += 1;
                }
                if t.is_punct(j, b':') && !t.is_punct(j + 1, b':') {
                    i = j + 1;
                    head = None;
                    continue;
                }
            }
            if t.is_punct(i, b';') {
                i += 1;
                head = None;
                continue;
            }
            if matches!(t.ident(i), Some("friend" | "export")) {
                i += 1;
                continue;
            }
            let ctx = Ctx {
                frame,
                start: head.take().unwrap_or(i),
                limit,
            };
            let next = match t.ident(i) {
                Some("namespace") => {
                    let (next, f) = self.namespace(i, ctx);
                    frames.extend(f);
                    next
                }
                Some("inline") if t.is(i + 1, "namespace") => i + 1,
                Some("extern") if t.is_str(i + 1) && t.is_punct(i + 2, b'{') => {
                    frames.push(Frame {
                        end: t.close(i + 2).unwrap_or(n),
                        kind: FrameKind::Block,
                        name: None,
                    });
                    i + 3
                }
                Some("extern") if t.is_str(i + 1) => i + 2,
                Some("class" | "struct" | "union") => {
                    let (next, f) = self.class(i, ctx);
                    frames.extend(f);
                    next
                }
                Some("enum") => self.enumeration(i, ctx),
                Some("typedef") => self.typedef(i, ctx),
                Some("using") => self.using(i, ctx),
                Some(id)
                    if is_macro_name(id)
                        && !t.is_punct(i + 1, b'(')
                        && t.line(i + 1) > t.line(i) =>
                {
                    i + 1 // `Q_OBJECT` on its own line
                }
                _ => self.general(i, ctx),
            };
            i = next.max(i + 1);
        }
    }

    pub(super) fn doc_line(&self, ctx: &Ctx, name_line: u32) -> Option<u32> {
        let start_line = self.t.line(ctx.start);
        self.t
            .lx
            .doc_comment_above(start_line)
            .or((start_line < name_line).then_some(start_line))
    }

    pub(super) fn push_symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        name_tok: usize,
        end_line: u32,
        ctx: &Ctx,
        container: Option<&str>,
    ) {
        let line = self.t.line(name_tok);
        let doc_line = self.doc_line(ctx, line);
        let container = container.map(str::to_string);
        self.facts
            .push_symbol(name, kind, (line, end_line), doc_line, container);
    }

    /// The index of the `;` ending the statement at `k` (groups skipped), or of a closer, or
    /// `limit`.
    pub(super) fn to_semicolon(&self, mut k: usize, limit: usize) -> usize {
        let t = self.t;
        while k < limit {
            if t.is_punct(k, b';') || t.is_punct(k, b'}') || t.is_punct(k, b')') {
                return k;
            }
            k = t.skip_group(k);
        }
        limit
    }

    pub(super) fn container_of(ctx: &Ctx<'a>) -> Option<&'a str> {
        ctx.frame.and_then(|f| f.name)
    }

    pub(super) fn namespace(&mut self, i: usize, ctx: Ctx<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let (last, mut j) = t.path_end(i + 1);
        while t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
            j = t.skip_group(j);
        }
        if !t.is_punct(j, b'{') {
            return (self.to_semicolon(j, ctx.limit) + 1, None);
        }
        if last.is_some() {
            let name = self.text_between(i + 1, j);
            self.push_symbol(
                &name,
                SymbolKind::Module,
                i + 1,
                t.group_end_line(j),
                &ctx,
                Self::container_of(&ctx),
            );
        }
        let frame = Frame {
            end: t.close(j).unwrap_or(t.len()),
            kind: FrameKind::Namespace,
            name: last,
        };
        (j + 1, Some(frame))
    }

    /// The source of tokens `s..e` without whitespace (`a :: b` → `a::b`; `operator bool`
    /// `operator bool` keeps the space between words).
    pub(super) fn text_between(&self, s: usize, e: usize) -> String {
        let t = self.t;
        let mut out = String::new();
        for k in s..e {
            let word = |x: usize| matches!(t.kind(x), Some(TokKind::Ident | TokKind::Num));
            if k > s && word(k) && word(k - 1) {
                out.push(' ');
            }
            out.push_str(t.text(k));
        }
        out
    }

    pub(super) fn class(&mut self, i: usize, ctx: Ctx<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let is_class = t.is(i, "class");
        let mut j = i + 1;
        let mut name_tok = None;
        loop {
            if t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
                j = t.skip_group(j);
            } else if matches!(t.ident(j), Some("alignas" | "__declspec" | "__attribute__"))
                && t.is_punct(j + 1, b'(')
            {
                j = t.skip_group(j + 1);
            } else if let Some(id) = t.ident(j)
                && id != "final"
            {
                name_tok = Some(j);
                j += 1;
                if t.op2(j, b"::") {
                    j += 2;
                }
            } else {
                break;
            }
        }
        if t.is_punct(j, b'<') {
            j = self.t.skip_generic_args(j);
        }
        if t.is(j, "final") {
            j += 1;
        }
        let colon = t.is_punct(j, b':') && !t.is_punct(j + 1, b':');
        if !colon && !t.is_punct(j, b'{') {
            if t.is_punct(j, b';') {
                return (j + 1, None); // forward declaration
            }
            return (self.general(i, ctx), None);
        }
        let mut open = j;
        if colon {
            open = j + 1;
            while open < ctx.limit && !t.is_punct(open, b'{') {
                if t.is_punct(open, b';') || t.is_punct(open, b'}') {
                    return (open + 1, None);
                }
                open = if t.is_punct(open, b'<') {
                    self.t.skip_generic_args(open).max(open + 1)
                } else {
                    t.skip_group(open)
                };
            }
            if !t.is_punct(open, b'{') {
                return (open, None);
            }
        }
        let name = name_tok.and_then(|k| t.ident(k));
        if let (Some(name), Some(nt)) = (name, name_tok) {
            let kind = if is_class {
                SymbolKind::Class
            } else {
                SymbolKind::Struct
            };
            self.push_symbol(
                name,
                kind,
                nt,
                t.group_end_line(open),
                &ctx,
                Self::container_of(&ctx),
            );
            if colon {
                self.grpc_bases(j + 1, open, name, t.line(nt));
            }
        }
        let frame = Frame {
            end: t.close(open).unwrap_or(t.len()),
            kind: FrameKind::Class,
            name,
        };
        (open + 1, Some(frame))
    }

    /// `: public Svc::Service`, `Svc::WithAsyncMethod_X<…>`, `Svc::CallbackService`.
    pub(super) fn grpc_bases(&mut self, s: usize, e: usize, class: &str, line: u32) {
        let t = self.t;
        let first = self.facts.grpc.len();
        for k in s..e {
            let Some(id) = t.ident(k) else { continue };
            if k < 3 || !t.op2(k - 2, b"::") || t.op2(k + 1, b"::") || !is_grpc_service_base(id) {
                continue;
            }
            let Some(svc) = t.ident(k - 3) else { continue };
            if svc == "grpc" || svc == "std" {
                continue;
            }
            let dup = self.facts.grpc[first..].iter().any(|g| {
                matches!(g, GrpcFact::Server { service, impl_type: Some(c), .. }
                    if service == svc && c == class)
            });
            if !dup {
                self.facts.grpc.push(GrpcFact::Server {
                    service: svc.to_string(),
                    impl_type: Some(class.to_string()),
                    line,
                });
            }
        }
    }

    pub(super) fn enumeration(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let mut j = i + 1;
        if t.is(j, "class") || t.is(j, "struct") {
            j += 1;
        }
        while t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
            j = t.skip_group(j);
        }
        let name_tok = t.ident(j).map(|_| j);
        if name_tok.is_some() {
            j += 1;
        }
        if t.is_punct(j, b':') && !t.is_punct(j + 1, b':') {
            while j < ctx.limit
                && !t.is_punct(j, b'{')
                && !t.is_punct(j, b';')
                && !t.is_punct(j, b'}')
            {
                j += 1;
            }
        }
        if !t.is_punct(j, b'{') {
            if t.is_punct(j, b';') {
                return j + 1;
            }
            return self.general(i, ctx);
        }
        let name = name_tok.and_then(|k| t.ident(k));
        if let (Some(name), Some(nt)) = (name, name_tok) {
            self.push_symbol(
                name,
                SymbolKind::Enum,
                nt,
                t.group_end_line(j),
                &ctx,
                Self::container_of(&ctx),
            );
        }
        self.enum_values(j, name.or(Self::container_of(&ctx)));
        t.skip_group(j)
    }

    pub(super) fn enum_values(&mut self, open: usize, container: Option<&str>) {
        let t = self.t;
        let end = t.close(open).unwrap_or(t.len());
        let mut k = open + 1;
        let mut at_start = true;
        while k < end {
            if t.is_punct(k, b',') {
                at_start = true;
                k += 1;
                continue;
            }
            if t.is_punct(k, b'[') && t.is_punct(k + 1, b'[') {
                k = t.skip_group(k);
                continue;
            }
            if at_start && let Some(v) = t.ident(k) {
                let line = t.line(k);
                self.facts.push_symbol(
                    v,
                    SymbolKind::EnumValue,
                    (line, line),
                    t.lx.doc_comment_above(line),
                    container.map(str::to_string),
                );
            }
            at_start = false;
            k = t.skip_group(k);
        }
    }

    pub(super) fn typedef(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let mut j = i + 1;
        if matches!(t.ident(j), Some("struct" | "union" | "enum" | "class")) {
            let kw = t.text(j);
            let mut k = j + 1;
            if t.is(k, "class") {
                k += 1;
            }
            let tag = t.ident(k).map(|_| k);
            if tag.is_some() {
                k += 1;
            }
            if t.is_punct(k, b':') && kw == "enum" {
                while k < ctx.limit && !t.is_punct(k, b'{') && !t.is_punct(k, b';') {
                    k += 1;
                }
            }
            if t.is_punct(k, b'{') {
                let end_line = t.group_end_line(k);
                let container = Self::container_of(&ctx);
                if let Some(tag) = tag
                    && let Some(name) = t.ident(tag)
                {
                    let kind = match kw {
                        "enum" => SymbolKind::Enum,
                        "class" => SymbolKind::Class,
                        _ => SymbolKind::Struct,
                    };
                    self.push_symbol(name, kind, tag, end_line, &ctx, container);
                }
                // The aliases after the body: `} Name, *NamePtr;`.
                let after = t.skip_group(k);
                let end = self.to_semicolon(after, ctx.limit);
                let first_alias = (after..end).find_map(|x| t.ident(x));
                if kw == "enum" {
                    self.enum_values(k, tag.and_then(|x| t.ident(x)).or(first_alias));
                }
                for x in after..end {
                    if let Some(alias) = t.ident(x) {
                        self.push_symbol(
                            alias,
                            SymbolKind::TypeAlias,
                            x,
                            t.line(x),
                            &ctx,
                            container,
                        );
                    }
                }
                return end + 1;
            }
            j = k;
        }
        let end = self.to_semicolon(j, ctx.limit);
        // `typedef void (*Handler)(int);` names the pointer inside the first group.
        let mut name_tok = None;
        let mut k = j;
        while k < end {
            if t.is_punct(k, b'(') {
                if (t.is_punct(k + 1, b'*') || t.is_punct(k + 1, b'^')) && t.ident(k + 2).is_some()
                {
                    name_tok = Some(k + 2);
                    break;
                }
                k = t.skip_group(k);
                continue;
            }
            if t.is_punct(k, b'[') {
                k = t.skip_group(k);
                continue;
            }
            if t.ident(k).is_some() {
                name_tok = Some(k);
            }
            k += 1;
        }
        if let Some(nt) = name_tok
            && let Some(name) = t.ident(nt)
        {
            self.push_symbol(
                name,
                SymbolKind::TypeAlias,
                nt,
                t.line(end.min(t.len().saturating_sub(1))),
                &ctx,
                Self::container_of(&ctx),
            );
        }
        end + 1
    }

    pub(super) fn using(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let end = self.to_semicolon(i + 1, ctx.limit);
        if let Some(name) = t.ident(i + 1)
            && t.is_punct(i + 2, b'=')
        {
            let end_line = t.line(end.min(t.len().saturating_sub(1)));
            self.push_symbol(
                name,
                SymbolKind::TypeAlias,
                i + 1,
                end_line,
                &ctx,
                Self::container_of(&ctx),
            );
        }
        end + 1
    }
}
