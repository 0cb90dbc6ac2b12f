//! The declaration statements that are not a type: functions (defined, or declared in a
//! class, or out of line as `Cls::method`), variables and constants, and the values they hold.

use super::*;

impl<'a> Cpp<'_, '_, 'a> {
    /// Any other declaration statement: a function (definition, or declaration in a class), a
    /// variable or constant, or something to skip. Returns the index after it.
    pub(super) fn general(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let limit = ctx.limit;
        let mut is_const = false;
        let mut k = i;
        while k < limit {
            if t.is_punct(k, b';') {
                return k + 1;
            }
            if t.is_punct(k, b'}') {
                return k;
            }
            if t.is_punct(k, b')') || t.is_punct(k, b']') {
                return k + 1;
            }
            if t.is_punct(k, b'<') {
                k = self.t.skip_generic_args(k).max(k + 1);
                continue;
            }
            if t.is_punct(k, b'=') && !t.is_punct(k + 1, b'=') {
                return self.variable(k, None, ctx, is_const);
            }
            if t.is_punct(k, b'{') {
                if k > i
                    && (t.ident(k - 1).is_some() || t.is_punct(k - 1, b']'))
                    && !t.is_punct(k - 1, b')')
                {
                    return self.variable(k, Some(k), ctx, is_const);
                }
                return t.skip_group(k);
            }
            if let Some(id) = t.ident(k) {
                if matches!(id, "const" | "constexpr" | "constinit") {
                    is_const = true;
                }
                if id == "operator" {
                    let mut j = k + 1;
                    if t.is_punct(j, b'(') && t.is_punct(j + 1, b')') {
                        j += 2;
                    }
                    while j < limit && j < k + 10 && !t.is_punct(j, b'(') && !t.is_punct(j, b';') {
                        j += 1;
                    }
                    if t.is_punct(j, b'(') {
                        let name = self.text_between(k, j);
                        match self.function(k, &name, j, ctx) {
                            Some(next) => return next,
                            None => {
                                k = t.skip_group(j);
                                continue;
                            }
                        }
                    }
                    return self.to_semicolon(j, limit) + 1;
                }
                if t.is_punct(k + 1, b'(') {
                    if is_macro_name(id) || NOT_NAMES.contains(&id) {
                        // An attribute or macro call (`EXPORT(void)`, `__attribute__((x))`):
                        // a macro invocation on its own is a whole statement.
                        let after = t.skip_group(k + 1);
                        if k == i && t.line(after) > t.line(after - 1) && !t.is_punct(after, b';') {
                            return after;
                        }
                        k = after;
                        continue;
                    }
                    let name = if k > 0 && t.is_punct(k - 1, b'~') {
                        format!("~{id}")
                    } else {
                        id.to_string()
                    };
                    match self.function(k, &name, k + 1, ctx) {
                        Some(next) => return next,
                        None => {
                            k = t.skip_group(k + 1);
                            continue;
                        }
                    }
                }
            }
            k = t.skip_group(k);
        }
        limit
    }

    /// The token after the qualifiers that follow a parameter list closing at `close`
    /// (`const`, `noexcept(…)`, `override`, attributes, a trailing return type); `Err` with
    /// the index to resume at when a trailing return type runs into a closing `}`.
    fn after_qualifiers(&self, close: usize, ctx: &Ctx<'a>) -> Result<usize, usize> {
        let t = self.t;
        let mut j = close + 1;
        loop {
            if let Some(id) = t.ident(j) {
                match id {
                    "const" | "volatile" | "override" | "final" | "mutable" | "constexpr" => j += 1,
                    "noexcept" | "throw" | "__attribute__" | "requires" => {
                        j += 1;
                        if t.is_punct(j, b'(') {
                            j = t.skip_group(j);
                        }
                    }
                    _ if is_macro_name(id) && t.line(j) == t.line(close) => {
                        j += 1;
                        if t.is_punct(j, b'(') {
                            j = t.skip_group(j);
                        }
                    }
                    _ => break,
                }
            } else if t.is_punct(j, b'&') {
                j += 1;
            } else if t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
                j = t.skip_group(j);
            } else if t.op2(j, b"->") {
                // Trailing return type.
                j += 2;
                while j < ctx.limit
                    && !t.is_punct(j, b'{')
                    && !t.is_punct(j, b';')
                    && !t.is_punct(j, b'=')
                {
                    if t.is_punct(j, b'}') {
                        return Err(j);
                    }
                    j = if t.is_punct(j, b'<') {
                        self.t.skip_generic_args(j).max(j + 1)
                    } else {
                        t.skip_group(j)
                    };
                }
            } else {
                break;
            }
        }
        Ok(j)
    }

    /// A function candidate named at `name_tok` with parameters at `open`. Returns the index
    /// after the statement when it is a function (recorded or not), `None` when the
    /// parentheses turned out not to be a parameter list.
    pub(super) fn function(
        &mut self,
        name_tok: usize,
        name: &str,
        open: usize,
        ctx: Ctx<'a>,
    ) -> Option<usize> {
        let t = self.t;
        let close = t.close(open)?;
        let mut j = match self.after_qualifiers(close, &ctx) {
            Ok(j) => j,
            Err(end) => return Some(end),
        };
        let mut body = None;
        let mut decl_end = None;
        if t.is(j, "try") && t.is_punct(j + 1, b'{') {
            j += 1;
        }
        if t.is_punct(j, b'{') {
            body = Some(j);
        } else if t.is_punct(j, b':') && !t.is_punct(j + 1, b':') {
            // Constructor initializer list: `: a_(x), b_{y} {`.
            let mut k = j + 1;
            while k < ctx.limit {
                if t.is_punct(k, b'{') && !(t.ident(k - 1).is_some() || t.is_punct(k - 1, b'>')) {
                    body = Some(k);
                    break;
                }
                if t.is_punct(k, b';') || t.is_punct(k, b'}') {
                    return Some(k + 1);
                }
                k = if t.is_punct(k, b'<') {
                    self.t.skip_generic_args(k).max(k + 1)
                } else {
                    t.skip_group(k)
                };
            }
            if body.is_none() {
                return Some(k);
            }
        } else if t.is_punct(j, b';') {
            decl_end = Some(j);
        } else if t.is_punct(j, b'=') && !t.is_punct(j + 1, b'=') {
            // `= 0;`, `= default;`, `= delete;`
            let end = self.to_semicolon(j, ctx.limit);
            if !matches!(t.ident(j + 1), Some("default" | "delete")) && !t.is(j + 1, "0") {
                return Some(end + 1);
            }
            decl_end = Some(end);
        } else if t.is_punct(j, b',') {
            // `Foo a(1), b(2);`: variables.
            return Some(self.to_semicolon(j, ctx.limit) + 1);
        } else if t.ident(j).is_some() && t.line(j) > t.line(close) {
            // A macro invocation without a semicolon (`Q_DECLARE_METATYPE(X)`).
            return Some(j);
        } else {
            return None;
        }
        // Name, qualifiers and kind.
        let mut q = if name.starts_with('~') {
            name_tok - 1
        } else {
            name_tok
        };
        let mut quals: Vec<&str> = Vec::new();
        while q >= 3 && t.op2(q - 2, b"::") {
            let Some(seg) = t.ident(q - 3) else { break };
            quals.push(seg);
            q -= 3;
        }
        let class_frame = match ctx.frame {
            Some(Frame {
                kind: FrameKind::Class,
                name,
                ..
            }) => Some(name),
            _ => None,
        };
        let (kind, container) = if let Some(&c) = quals.first() {
            if name == c {
                (SymbolKind::Constructor, Some(c))
            } else {
                (SymbolKind::Method, Some(c))
            }
        } else if let Some(c) = class_frame {
            if c.is_some_and(|c| c == name) {
                (SymbolKind::Constructor, c)
            } else {
                (SymbolKind::Method, c)
            }
        } else {
            (SymbolKind::Function, Self::container_of(&ctx))
        };
        let record = body.is_some() || (class_frame.is_some() && quals.is_empty());
        let next = match (body, decl_end) {
            (Some(b), _) => {
                let end_line = t.group_end_line(b);
                if record {
                    self.push_symbol(name, kind, name_tok, end_line, &ctx, container);
                }
                self.bodies.push((b, t.close(b).unwrap_or(t.len())));
                t.skip_group(b)
            }
            (None, Some(e)) => {
                if record {
                    let end_line = t.line(e.min(t.len().saturating_sub(1)));
                    self.push_symbol(name, kind, name_tok, end_line, &ctx, container);
                }
                e + 1
            }
            (None, None) => return None,
        };
        Some(next)
    }

    /// A variable or constant whose initializer starts at `eq` (`=`) or is the brace group at
    /// `brace`. Records constants (`const`/`constexpr`) and namespace-level variables.
    pub(super) fn variable(
        &mut self,
        eq: usize,
        brace: Option<usize>,
        ctx: Ctx<'a>,
        is_const: bool,
    ) -> usize {
        let t = self.t;
        let (value_range, end) = match brace {
            Some(b) => {
                let close = t.close(b).unwrap_or(ctx.limit);
                (
                    (b + 1, close),
                    self.to_semicolon(t.skip_group(b), ctx.limit),
                )
            }
            None => {
                let end = self.to_semicolon(eq + 1, ctx.limit);
                ((eq + 1, end), end)
            }
        };
        let mut n = eq.saturating_sub(1);
        if t.is_punct(n, b']') {
            while n > 0 && !t.is_punct(n, b'[') {
                n -= 1;
            }
            n = n.saturating_sub(1);
        }
        let Some(name) = t.ident(n) else {
            return end + 1;
        };
        if NOT_NAMES.contains(&name) || name == "operator" {
            return end + 1;
        }
        let in_class = ctx.in_class();
        let kind = if is_const {
            SymbolKind::Constant
        } else if !in_class {
            SymbolKind::Variable
        } else {
            return end + 1; // a data member with a default value
        };
        let container = Self::container_of(&ctx);
        let end_line = t.end_line(end.min(t.len().saturating_sub(1)).max(n));
        self.push_symbol(name, kind, n, end_line, &ctx, container);
        if is_const {
            let value = self.value(value_range);
            if !value.is_dynamic() {
                let qualified = match (in_class, container) {
                    (true, Some(c)) => format!("{c}.{name}"),
                    _ => name.to_string(),
                };
                self.facts.bindings.push(Binding {
                    name: qualified,
                    value,
                    line: t.line(n),
                });
            }
        }
        end + 1
    }

    /// `s..e` without what does not change a string's value: a trailing `.c_str()` / `.data()`,
    /// and a brace-initialised wrapper around it (`cpr::Url{…}`, `std::string{…}`).
    pub(super) fn peel(&self, (s, e): (usize, usize)) -> (usize, usize) {
        let t = self.t;
        let mut e = e.min(t.len());
        while e >= s + 4
            && t.is_punct(e - 4, b'.')
            && matches!(t.text(e - 3), "c_str" | "data")
            && t.is_punct(e - 2, b'(')
            && t.is_punct(e - 1, b')')
        {
            e -= 4;
        }
        let mut j = s;
        while t.ident(j).is_some() && t.op2(j + 1, b"::") {
            j += 3;
        }
        if t.ident(j).is_some() && t.is_punct(j + 1, b'{') && t.close(j + 1) == Some(e - 1) {
            return (j + 2, e - 1);
        }
        (s, e)
    }

    /// The value of the expression in `r`, read by the shared evaluator; adjacent literals
    /// (`"orders." "created"`) are one.
    pub(super) fn value(&self, r: (usize, usize)) -> Value {
        let t = self.t;
        let (s, e) = self.peel(r);
        if s >= e {
            return Value::dynamic();
        }
        if e > s + 1 && (s..e).all(|k| t.is_str(k)) {
            let mut v = String::new();
            for k in s..e {
                v.push_str(&t.str_value(k).unwrap_or_default());
            }
            return Value::lit(v);
        }
        eval(t, (s, e), &ExprRules::CPP, self.asg)
    }
}
