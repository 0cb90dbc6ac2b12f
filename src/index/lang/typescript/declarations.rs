//! Pass 2, declarations: statements of the file and of namespaces on an explicit stack of
//! regions — interfaces, enums, type aliases, functions, modules, variables and the constants
//! their literal values give. Classes are in [`super::classes`].

use super::{Declares, Ex, Region, Site};
use crate::index::facts::{Symbol, SymbolKind};
use crate::index::lang::cfamily;
use crate::index::lang::tokens::TokKind;

/// Where a function value's body is.
#[derive(Clone, Copy)]
pub(super) enum FnBody {
    /// A `{…}` body opened at this token.
    Block(usize),
    /// An expression-bodied arrow, at this `=>`.
    Expr(usize),
}

fn is_upper_const(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn declarations(&mut self) {
        let mut work = vec![Region::file(self.t.len())];
        while let Some(r) = work.pop() {
            if r.class.is_some() {
                self.class_body(r);
            } else {
                self.statements(r, &mut work);
            }
        }
    }

    /// The line of the token closing the group at `open` (the file's last line if unclosed).
    pub(super) fn close_line(&self, open: usize) -> u32 {
        cfamily::close_line(self.t, open)
    }

    /// Where a function or method whose parameters open at `open` ends, as (end line, next
    /// token): after its body, or, with no body (an overload, an abstract or arrow member),
    /// after the expression that follows the parameters.
    pub(super) fn signature_end(&self, open: usize, b: usize) -> (u32, usize) {
        let t = self.t;
        let pclose = t.close(open).unwrap_or(b);
        match self.body_open_after(pclose + 1, b) {
            Some(o) => (self.close_line(o), t.skip_group(o)),
            None => {
                let e = self.expr_end(pclose + 1, b, false);
                (
                    self.last_line(e.saturating_sub(1).max(pclose.min(b))),
                    if t.is(e, ";") { e + 1 } else { e },
                )
            }
        }
    }

    fn statements(&mut self, r: Region, work: &mut Vec<Region>) {
        let t = self.t;
        let b = r.b;
        let container = r.container.as_deref();
        let mut i = r.a;
        while i < b {
            let (j, attr_line, decos) = self.decorators(i, b);
            let site = Site::new(self.t, container, attr_line);
            i = j;
            if i >= b {
                break;
            }
            let start = i;
            let mut default = false;
            loop {
                match t.ident(i) {
                    Some("export")
                        if !(t.is(i + 1, "{")
                            || t.is(i + 1, "*")
                            || t.is(i + 1, "=")
                            || (t.is(i + 1, "type") && t.is(i + 2, "{"))) =>
                    {
                        i += 1
                    }
                    Some("default") if i > start => {
                        default = true;
                        i += 1;
                    }
                    Some("declare") if t.ident(i + 1).is_some() => i += 1,
                    Some("abstract") if t.is(i + 1, "class") => i += 1,
                    _ => break,
                }
            }
            let next = match t.ident(i) {
                Some("class") => self.class_decl(i, default, site, &decos, work, b),
                Some("interface") if t.ident(i + 1).is_some() => self.interface_decl(i, site, b),
                Some("enum") if t.ident(i + 1).is_some() => self.enum_decl(i, site, b),
                Some("const") if t.is(i + 1, "enum") => self.enum_decl(i + 1, site, b),
                Some("type")
                    if t.ident(i + 1).is_some() && (t.is(i + 2, "=") || t.is(i + 2, "<")) =>
                {
                    self.type_alias(i, site, b)
                }
                Some("function") => self.function_decl(i, default, site, b),
                Some("async") if t.is(i + 1, "function") => {
                    self.function_decl(i + 1, default, site, b)
                }
                Some("namespace" | "module")
                    if t.ident(i + 1).is_some() || t.str_lit(i + 1).is_some() =>
                {
                    self.module_decl(i, site, work, b)
                }
                Some("global") if t.is(i + 1, "{") => {
                    let body = Region::body(t, i + 1, b, r.container.clone(), None);
                    let end = body.b;
                    work.push(body);
                    end + 1
                }
                Some(kw @ ("const" | "let" | "var"))
                    if t.ident(i + 1).is_some() || t.is_opener(i + 1) =>
                {
                    self.var_decl(i, kw == "const", site, b)
                }
                Some("exports" | "module") => self.exports_assignment(i, site, b),
                _ => self.stmt_next(i, b),
            };
            i = next.max(i + 1);
        }
    }

    fn interface_decl(&mut self, kw: usize, site: Site, b: usize) -> usize {
        let t = self.t;
        let name = t.text(kw + 1);
        let mut j = kw + 2;
        let mut angle = 0usize;
        while j < b {
            if t.is(j, "{") && angle == 0 {
                break;
            }
            if t.is(j, ";") || t.is(j, "}") {
                return self.stmt_next(kw, b);
            }
            j = self.type_step(j, &mut angle);
        }
        if j >= b {
            return b;
        }
        let end_line = self.close_line(j);
        self.declare(site, name, SymbolKind::Interface, kw + 1, end_line);
        t.skip_group(j)
    }

    fn enum_decl(&mut self, kw: usize, site: Site, b: usize) -> usize {
        let t = self.t;
        let name = t.text(kw + 1);
        if !t.is(kw + 2, "{") {
            return self.stmt_next(kw, b);
        }
        let open = kw + 2;
        let end_line = self.close_line(open);
        self.declare(site, name, SymbolKind::Enum, kw + 1, end_line);
        for (a, e) in t.args(open) {
            let Some(member) = t.ident(a).or_else(|| t.str_lit(a).map(|s| s.raw)) else {
                continue;
            };
            cfamily::push_enum_value(&mut self.facts, t, member, a, name);
            if t.is(a + 1, "=")
                && e == a + 3
                && let Some(s) = t.str_lit(a + 2)
                && !s.raw.contains("${")
            {
                let qualified = format!("{name}.{member}");
                let line = self.line(a);
                self.push_constant(qualified, s.value().into_owned(), line);
            }
        }
        t.skip_group(open)
    }

    fn type_alias(&mut self, kw: usize, site: Site, b: usize) -> usize {
        let t = self.t;
        let name = t.text(kw + 1);
        let from = self.t.skip_angles(kw + 2, b);
        let e = self.expr_end(from.max(kw + 2), b, false);
        let end_line = self.last_line(e.saturating_sub(1).max(kw + 1));
        self.declare(site, name, SymbolKind::TypeAlias, kw + 1, end_line);
        if t.is(e, ";") { e + 1 } else { e.max(kw + 2) }
    }

    fn function_decl(&mut self, kw: usize, default: bool, site: Site, b: usize) -> usize {
        let t = self.t;
        let mut k = kw + 1;
        if t.is(k, "*") {
            k += 1;
        }
        let (name, name_tok) = match t.ident(k) {
            Some(n) => {
                k += 1;
                (n, k - 1)
            }
            None if default => ("default", kw),
            None => return self.stmt_next(kw, b),
        };
        let k = self.t.skip_angles(k, b);
        if !t.is(k, "(") {
            return self.stmt_next(kw, b);
        }
        let (end_line, next) = self.signature_end(k, b);
        self.declare(site, name, SymbolKind::Function, name_tok, end_line);
        next
    }

    fn module_decl(&mut self, kw: usize, site: Site, work: &mut Vec<Region>, b: usize) -> usize {
        let t = self.t;
        let mut k = kw + 1;
        let name = if let Some(s) = t.str_lit(k) {
            k += 1;
            s.raw.to_string()
        } else {
            let mut name = t.text(k).to_string();
            k += 1;
            while t.is(k, ".") && t.ident(k + 1).is_some() {
                name.push('.');
                name.push_str(t.text(k + 1));
                k += 2;
            }
            name
        };
        if !t.is(k, "{") {
            // `declare module 'x';` or `module.exports` lookalikes.
            return self.stmt_next(kw, b);
        }
        let end_line = self.close_line(k);
        self.declare(site, &name, SymbolKind::Module, kw + 1, end_line);
        let body = Region::body(t, k, b, Some(name), None);
        let end = body.b;
        work.push(body);
        end + 1
    }

    /// The end line of a function value (`async (a) => …`, `function (…) {…}`, `x => x`)
    /// starting at `v` (before `e`), or `None` when the value is not a function.
    pub(super) fn function_value(&self, v: usize, e: usize) -> Option<u32> {
        Some(match self.fn_value_body(v, e)? {
            FnBody::Block(o) => self.close_line(o),
            FnBody::Expr(arrow) => self.last_line(e.saturating_sub(1).max(arrow)),
        })
    }

    /// The body of a function value starting at `v` (before `e`), or `None` when the value
    /// is not a function.
    pub(super) fn fn_value_body(&self, v: usize, e: usize) -> Option<FnBody> {
        let t = self.t;
        let mut k = v;
        if t.is(k, "async") {
            k += 1;
        }
        if t.is(k, "function") {
            k += 1;
            if t.is(k, "*") {
                k += 1;
            }
            if t.ident(k).is_some() {
                k += 1;
            }
            let k = self.t.skip_angles(k, e);
            let pclose = t.close(k).filter(|_| t.is(k, "("))?;
            let o = self.body_open_after(pclose + 1, e.max(pclose + 2))?;
            return Some(FnBody::Block(o));
        }
        let k = self.t.skip_angles(k, e);
        let arrow = if t.is(k, "(") {
            let c = t.close(k)?;
            if t.is(c + 1, "=>") {
                c + 1
            } else if t.is(c + 1, ":") {
                t.find_at_depth0(c + 2, e, "=>")?
            } else {
                return None;
            }
        } else if t.ident(k).is_some() && t.is(k + 1, "=>") {
            k + 1
        } else {
            return None;
        };
        if t.is(arrow + 1, "{") {
            Some(FnBody::Block(arrow + 1))
        } else {
            Some(FnBody::Expr(arrow))
        }
    }

    /// The token after `j` in a type where `angle` generic argument lists are open: `<` and
    /// `>` open and close one, a bracketed group is skipped whole.
    fn type_step(&self, j: usize, angle: &mut usize) -> usize {
        let t = self.t;
        if t.is(j, "<") {
            *angle += 1;
        } else if t.is(j, ">") {
            *angle = angle.saturating_sub(1);
        } else if t.is_opener(j) {
            return t.skip_group(j);
        }
        j + 1
    }

    /// Past a type annotation starting at `from`: the first depth-0 `=`, `,`, `;` or closer,
    /// with `<…>` and groups skipped.
    fn type_end(&self, from: usize, b: usize) -> usize {
        let t = self.t;
        let mut j = from;
        let mut angle = 0usize;
        while j < b {
            if angle == 0
                && (t.is(j, "=") || t.is(j, ",") || t.is(j, ";") || t.is(j, ")") || t.is(j, "}"))
            {
                return j;
            }
            if angle == 0 && j > from && self.breaks(j - 1, j) {
                return j;
            }
            j = self.type_step(j, &mut angle);
        }
        b
    }

    /// The end of an initializer starting at `v`: like [`Self::expr_end`] with commas, but a
    /// leading `<T,>` and `Foo<A, B>(`/`Map<K, V>` type arguments do not split it.
    fn init_end(&self, v: usize, b: usize) -> usize {
        let t = self.t;
        let mut j = self.t.skip_angles(v, b).max(v);
        loop {
            let e = self.expr_end(j, b, true);
            if t.is(e, ",") && e > j {
                // A comma inside `<…>` after a name: find the `<` on the way.
                let mut k = j;
                let mut resumed = None;
                while k < e {
                    if t.is(k, "<") && k > v && t.ident(k - 1).is_some() {
                        let after = self.t.skip_angles(k, b);
                        if after > e {
                            resumed = Some(after);
                            break;
                        }
                    }
                    k = t.skip_group(k);
                }
                if let Some(r) = resumed {
                    j = r;
                    continue;
                }
            }
            return e;
        }
    }

    fn var_decl(&mut self, kw: usize, is_const: bool, site: Site, b: usize) -> usize {
        let t = self.t;
        let mut i = kw + 1;
        loop {
            if i >= b {
                return b;
            }
            if t.is(i, "{") || t.is(i, "[") {
                i = t.skip_group(i);
                if t.is(i, ":") {
                    i = self.type_end(i + 1, b);
                }
                if t.is(i, "=") {
                    i = self.init_end(i + 1, b);
                }
            } else if let Some(name) = t.ident(i) {
                let name_idx = i;
                i += 1;
                if t.is(i, "!") {
                    i += 1;
                }
                if t.is(i, ":") {
                    i = self.type_end(i + 1, b);
                }
                if t.is(i, "=") {
                    let v = i + 1;
                    let e = self.init_end(v, b);
                    self.binding(name, name_idx, is_const, v, e, site);
                    i = e.max(v);
                } else {
                    let kind = if is_upper_const(name) && is_const {
                        SymbolKind::Constant
                    } else {
                        SymbolKind::Variable
                    };
                    let line = self.line(name_idx);
                    self.declare(site, name, kind, name_idx, line);
                }
            } else {
                return self.stmt_next(i, b);
            }
            if t.is(i, ",") {
                i += 1;
                continue;
            }
            return if t.is(i, ";") { i + 1 } else { i };
        }
    }

    /// A `name = value` binding at module or namespace level: a function, a constant or a
    /// variable, plus the constant facts its literal value gives.
    #[allow(clippy::too_many_arguments)]
    fn binding(
        &mut self,
        name: &str,
        name_idx: usize,
        is_const: bool,
        v: usize,
        e: usize,
        site: Site,
    ) {
        let t = self.t;
        if let Some(end_line) = self.function_value(v, e) {
            self.declare(site, name, SymbolKind::Function, name_idx, end_line);
            return;
        }
        let mut w = v;
        if t.is(w, "await") {
            w += 1;
        }
        if (t.is(w, "require") || t.is(w, "import")) && t.is(w + 1, "(") {
            return;
        }
        let end_line = self.last_line(e.saturating_sub(1).max(v));
        if t.is(v, "class") {
            self.declare(site, name, SymbolKind::Class, name_idx, end_line);
            return;
        }
        let qualified = |n: &str| match site.container {
            Some(c) => format!("{c}.{n}"),
            None => n.to_string(),
        };
        // `x`, `x as const`: the value's last token.
        let single = e == v + 1 || (e == v + 3 && t.is(v + 1, "as") && t.is(v + 2, "const"));
        let plain_str = t
            .str_lit(v)
            .filter(|s| single && !(t.text(v).starts_with('`') && s.raw.contains("${")));
        let literal = plain_str.is_some()
            || (single
                && (t.kind(v) == Some(TokKind::Num)
                    || t.is(v, "true")
                    || t.is(v, "false")
                    || t.is(v, "null")))
            || (t.is(v, "-") && t.kind(v + 1) == Some(TokKind::Num))
            || ((t.is(v, "{") || t.is(v, "["))
                && t.close(v)
                    .is_some_and(|c| c + 1 == e || (c + 3 == e && t.is(c + 2, "const"))));
        let mut env_default = false;
        if is_const {
            if let Some(s) = plain_str {
                let line = self.line(v);
                self.push_constant(qualified(name), s.value().into_owned(), line);
            } else if let Some(d) = self.env_lookup(v, e).and_then(|v| v.env_default()) {
                env_default = true;
                let line = self.line(v);
                self.push_constant(qualified(name), d, line);
            } else {
                // `{ … } as const`, `Object.freeze({ … })`.
                let open = if t.is(v, "{") {
                    Some(v)
                } else if t.is(v, "Object") && t.is(v + 2, "freeze") && t.is(v + 4, "{") {
                    Some(v + 4)
                } else {
                    None
                };
                if let Some(o) = open {
                    self.object_constants(o, qualified(name));
                }
            }
        }
        let kind = if is_upper_const(name) || (is_const && (literal || env_default)) {
            SymbolKind::Constant
        } else {
            SymbolKind::Variable
        };
        self.declare(site, name, kind, name_idx, end_line);
    }

    /// Constant facts for the string members of an object literal, nested objects included
    /// (`Topics.orders.CREATED`), on an explicit stack.
    fn object_constants(&mut self, open: usize, prefix: String) {
        let t = self.t;
        let mut stack = vec![(open, prefix)];
        while let Some((o, p)) = stack.pop() {
            for (a, e) in t.args(o) {
                let Some(key) = t.ident(a).or_else(|| t.str_lit(a).map(|s| s.raw)) else {
                    continue;
                };
                if !t.is(a + 1, ":") {
                    continue;
                }
                let val = a + 2;
                if let Some(s) = t.str_lit(val)
                    && (e == val + 1 || (e == val + 3 && t.is(val + 1, "as")))
                    && !(t.text(val).starts_with('`') && s.raw.contains("${"))
                {
                    let line = self.line(val);
                    self.push_constant(format!("{p}.{key}"), s.value().into_owned(), line);
                } else if t.is(val, "{") && stack.len() < 8 {
                    stack.push((val, format!("{p}.{key}")));
                }
            }
        }
    }

    /// `exports.f = function …` / `module.exports.f = (…) => …`: a function named `f`.
    fn exports_assignment(&mut self, i: usize, site: Site, b: usize) -> usize {
        let t = self.t;
        let k = if t.is(i, "module") && t.is(i + 1, ".") && t.is(i + 2, "exports") {
            i + 3
        } else if t.is(i, "exports") {
            i + 1
        } else {
            return self.stmt_next(i, b);
        };
        if t.is(k, ".")
            && let Some(name) = t.ident(k + 1)
            && t.is(k + 2, "=")
        {
            let v = k + 3;
            let e = self.init_end(v, b);
            if let Some(end_line) = self.function_value(v, e) {
                self.declare(site, name, SymbolKind::Function, k + 1, end_line);
            }
        }
        self.stmt_next(i, b)
    }
}

/// Declarations go to the file's symbols.
impl Declares for Ex<'_, '_, '_> {
    fn symbols(&mut self) -> &mut Vec<Symbol> {
        &mut self.facts.symbols
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use crate::index::facts::SymbolKind;

    #[test]
    fn interfaces_aliases_enums_functions_and_namespaces() {
        let src = r#"export interface Repo<T> extends Base {
  find(id: string): T;
}
export type Id =
  | string
  | number;
type Handler<T> = (x: T) => void;
export enum Status { Active = 'ACTIVE', Gone = 2, Plain }
export const enum Dir {
  Up = "up",
}
export default function () {}
export async function* stream(): AsyncGenerator<number> {
  yield 1;
}
function overload(a: string): void;
function overload(a: any) {}
declare function ambient(x: number): string;
export const load = async (id: string): Promise<void> => {
  await fetchIt(id);
};
const double = (x: number) => x * 2, triple = function (x) { return x * 3; };
export const API_URL = `https://api/v1`;
export let current = makeThing();
const MAX_RETRIES = compute();
var legacy = 1;
namespace Acme.Orders {
  export const LIMIT = 5;
  export function helper() {}
}
declare module 'express-serve-static-core' {
  interface Request { user?: User }
}
exports.handler = async (event) => { return 1; };
module.exports.other = function other() {};
"#;
        let f = extract("src/x.ts", src);
        use SymbolKind::*;
        let spans = [
            ("Repo", Interface, 1, 3),
            ("Id", TypeAlias, 4, 6),
            ("stream", Function, 13, 15),
            ("load", Function, 19, 21),
            ("Acme.Orders", Module, 27, 30),
        ];
        for (name, kind, line, end_line) in spans {
            let s = sym(&f, name);
            assert_eq!(
                (s.kind, s.line, s.end_line),
                (kind, line, end_line),
                "{name}"
            );
        }
        let kinds = [
            ("Handler", TypeAlias),
            ("Status", Enum),
            ("Plain", EnumValue),
            ("default", Function),
            ("double", Function),
            ("triple", Function),
            ("API_URL", Constant),
            ("current", Variable),
            ("MAX_RETRIES", Constant),
            ("legacy", Variable),
            ("express-serve-static-core", Module),
            ("handler", Function),
            ("other", Function),
        ];
        for (name, kind) in kinds {
            assert_eq!(sym(&f, name).kind, kind, "{name}");
        }
        for (name, container) in [
            ("Plain", "Status"),
            ("LIMIT", "Acme.Orders"),
            ("helper", "Acme.Orders"),
        ] {
            assert_eq!(
                sym(&f, name).container.as_deref(),
                Some(container),
                "{name}"
            );
        }
        assert_eq!(constant(&f, "Status.Active"), Some("ACTIVE"));
        assert_eq!(constant(&f, "Status.Gone"), None);
        assert_eq!(constant(&f, "Dir.Up"), Some("up"));
        assert_eq!(constant(&f, "API_URL"), Some("https://api/v1"));
        assert_eq!(sym(&f, "Dir").end_line, 11);
        assert_eq!(f.symbols.iter().filter(|s| s.name == "overload").count(), 2);
        assert_eq!(sym(&f, "ambient").end_line, 18);
    }

    #[test]
    fn constants_from_objects_enums_and_env_defaults() {
        let src = r#"export const Topics = {
  ORDER_CREATED: 'order.created',
  'ORDER_PAID': "order.paid",
  nested: { SHIPPED: `order.shipped` },
  dynamic: `orders.${env}`,
  count: 3,
} as const;
export const EVENTS = Object.freeze({ REFUND: 'order.refund' });
export const ORDERS_TOPIC = process.env.ORDERS_TOPIC ?? 'orders.v1';
const PAY = process.env['PAY_TOPIC'] || "payments";
const NO_DEFAULT = process.env.NOPE;
let notConst = 'x';
"#;
        let f = extract("src/topics.ts", src);
        assert_eq!(constant(&f, "Topics.ORDER_CREATED"), Some("order.created"));
        assert_eq!(constant(&f, "Topics.ORDER_PAID"), Some("order.paid"));
        assert_eq!(constant(&f, "Topics.nested.SHIPPED"), Some("order.shipped"));
        assert_eq!(constant(&f, "Topics.dynamic"), None);
        assert_eq!(constant(&f, "EVENTS.REFUND"), Some("order.refund"));
        assert_eq!(constant(&f, "ORDERS_TOPIC"), Some("orders.v1"));
        assert_eq!(constant(&f, "PAY"), Some("payments"));
        // An env var without a default is a binding whose value the graph cannot know.
        assert_eq!(constant(&f, "NO_DEFAULT"), Some("?"));
        // A top-level `let` is a binding too: other files' names resolve against it.
        assert_eq!(constant(&f, "notConst"), Some("x"));
        assert_eq!(sym(&f, "Topics").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "Topics").end_line, 7);
        assert_eq!(sym(&f, "PAY").kind, SymbolKind::Constant);
        assert_eq!(
            f.bindings
                .iter()
                .find(|c| c.name == "Topics.ORDER_PAID")
                .map(|c| c.line),
            Some(3)
        );
    }
}
