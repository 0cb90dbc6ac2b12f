//! Swift extractor: imports, types (class, struct, enum with its cases, protocol, actor),
//! extensions (their members are contained by the extended type), functions, initializers,
//! top-level `let`/`var`, type aliases, string constants (`static let` in types, raw values of
//! `String` enums), best-effort grpc-swift servers and clients, and `URL(string:)` /
//! Alamofire HTTP calls.
//!
//! Swift statements end at line breaks, so declarations are found by their keywords: each
//! region (the file, a type body) is scanned at bracket depth 0 and everything that is not a
//! declaration keyword is skipped (groups whole). Regions sit on an explicit stack, so nesting
//! never recurses.

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::cfamily::{Declares, Site};
use super::common;
use super::tokens::{Rules, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, FileFacts, GrpcFact, HttpFact, Import, Symbol, SymbolKind, Value,
};
use crate::index::lex::{Syntax, lex};

/// Extracts the facts of one Swift file.
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    let lx = lex(Syntax::SWIFT, text);
    let toks = Tokens::new(&lx, &Rules::SWIFT);
    let asg = Assignments::scan(&toks, &StmtStyle::NEWLINE);
    let mut ex = Ex {
        t: &toks,
        asg: &asg,
        facts: FileFacts::default(),
        clients: HashMap::new(),
        url_sites: HashSet::new(),
    };
    ex.bindings();
    ex.declarations();
    ex.uses();
    let mut facts = ex.facts;
    asg.export(&toks, &ExprRules::SWIFT, &mut facts);
    super::common::sort_by_line(&mut facts);
    facts
}

/// Declaration modifiers (`class` and `static` included: `class func`, `static let`).
const MODIFIERS: [&str; 26] = [
    "public",
    "private",
    "fileprivate",
    "internal",
    "open",
    "package",
    "final",
    "static",
    "class",
    "override",
    "mutating",
    "nonmutating",
    "convenience",
    "required",
    "lazy",
    "weak",
    "unowned",
    "dynamic",
    "indirect",
    "nonisolated",
    "optional",
    "isolated",
    "consuming",
    "borrowing",
    "distributed",
    "prefix",
];

/// The service of a grpc-swift generated type (`Orders_OrderServiceAsyncProvider` →
/// `OrderService`), given the suffixes that mark it.
fn generated_service(ty: &str, suffixes: &[&str]) -> Option<String> {
    let (_, tail) = ty.rsplit_once('_')?;
    let stem = suffixes.iter().find_map(|s| tail.strip_suffix(s))?;
    (!stem.is_empty() && stem.starts_with(|c: char| c.is_ascii_uppercase()))
        .then(|| stem.to_string())
}

const PROVIDER_SUFFIXES: [&str; 2] = ["AsyncProvider", "Provider"];
const CLIENT_SUFFIXES: [&str; 4] = ["AsyncClient", "NIOClient", "ClientProtocol", "Client"];

/// A declaration region still to scan.
struct Region {
    a: usize,
    b: usize,
    /// The type whose body this is (for extensions, the extended type).
    container: Option<String>,
    /// The region is an enum body whose raw type is `String`.
    string_enum: bool,
}

struct Ex<'t, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    /// Every `let`/`var` and assignment of the file, for what a name holds at a use.
    asg: &'t Assignments,
    facts: FileFacts,
    /// Variables and properties holding a gRPC client → its service.
    clients: HashMap<&'t str, String>,
    /// `(` of the `URL(string:)` calls already recorded as the URL of an enclosing request.
    url_sites: HashSet<usize>,
}

impl<'t> Ex<'t, '_, '_> {
    fn line(&self, i: usize) -> u32 {
        self.t.line(i)
    }

    fn close_line(&self, open: usize) -> u32 {
        super::cfamily::close_line(self.t, open)
    }

    /// True when the token at `j` starts a new statement after the token at `p`.
    fn breaks(&self, p: usize, j: usize) -> bool {
        const CONT_END: [&str; 16] = [
            "=", ",", ".", "(", "[", "{", ":", "?", "+", "-", "*", "/", "&&", "||", "??", "->",
        ];
        const CONT_START: [&str; 10] = [".", "?", ":", "+", "*", "/", "&&", "||", "??", "->"];
        let t = self.t;
        t.line(j) > t.line(p)
            && !CONT_END.iter().any(|s| t.is(p, s))
            && !CONT_START.iter().any(|s| t.is(j, s))
            && !t.is(j, "=")
    }

    /// The index of the first token after the expression starting at `from`: a line break
    /// that ends it, a `;`, an unmatched closer, or `b`.
    fn expr_end(&self, from: usize, b: usize) -> usize {
        let t = self.t;
        let mut j = from;
        let mut prev: Option<usize> = None;
        while j < b {
            if matches!(t.punct(j), b';' | b')' | b']' | b'}') {
                return j;
            }
            if let Some(p) = prev
                && self.breaks(p, j)
            {
                return j;
            }
            let nj = t.skip_group(j).min(b).max(j + 1);
            prev = Some(nj - 1);
            j = nj;
        }
        b
    }

    /// `r` without what does not change a string's value: an argument label (`string: x`), a
    /// force unwrap, and `URL(string: x)` around it.
    fn peel(&self, (s, e): (usize, usize)) -> (usize, usize) {
        let t = self.t;
        let (mut s, mut e) = (s, e.min(t.len()));
        while e > s && t.punct(e - 1) == b'!' {
            e -= 1;
        }
        if t.ident(s).is_some() && t.punct(s + 1) == b':' {
            s += 2;
        }
        if (t.kw(s, "URL") || t.kw(s, "URLComponents"))
            && t.punct(s + 1) == b'('
            && t.close(s + 1) == Some(e.saturating_sub(1))
            && t.kw(s + 2, "string")
            && t.punct(s + 3) == b':'
        {
            return (s + 4, e - 1);
        }
        (s, e)
    }

    /// The value of the expression in `r`, read by the shared evaluator.
    fn value(&self, r: (usize, usize)) -> Value {
        let (s, e) = self.peel(r);
        if s >= e {
            return Value::dynamic();
        }
        eval(self.t, (s, e), &ExprRules::SWIFT, self.asg)
    }

    /// The URL argument of a request. `sure` when the call is HTTP whatever its argument
    /// (Alamofire); otherwise it must read like a URL.
    fn url(&self, r: (usize, usize), sure: bool) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        common::url_of(self.value((s, e)), sure)
    }

    /// `@attr`, `@attr(…)`, `@Module.attr` starting at `i`: the index after them and the
    /// first one's line.
    fn attributes(&self, mut i: usize, b: usize) -> (usize, Option<u32>) {
        let t = self.t;
        let mut first = None;
        while i < b && t.punct(i) == b'@' && t.ident(i + 1).is_some() {
            first.get_or_insert(self.line(i));
            i += 2;
            while t.punct(i) == b'.' && t.ident(i + 1).is_some() {
                i += 2;
            }
            if t.punct(i) == b'(' && t.line(i) == t.line(i - 1) {
                i = t.skip_group(i);
            }
        }
        (i, first)
    }
}

// -- pass 1: client bindings -----------------------------------------------------------------

impl<'t> Ex<'t, '_, '_> {
    fn bindings(&mut self) {
        let t = self.t;
        for i in 0..t.len() {
            let Some(id) = t.ident(i) else {
                continue;
            };
            let Some(service) = generated_service(id, &CLIENT_SUFFIXES) else {
                continue;
            };
            if t.punct(i + 1) == b'(' {
                // `let client = Orders_OrderServiceAsyncClient(channel: channel)`.
                let var = self.assigned_name(i);
                if let Some(v) = var {
                    self.clients.insert(v, service.clone());
                }
                let line = self.line(i);
                self.facts.grpc.push(GrpcFact::Client {
                    service,
                    var: var.map(str::to_string),
                    line,
                });
            } else if i >= 2
                && t.punct(i - 1) == b':'
                && let Some(v) = t.ident(i - 2)
            {
                // `let orders: Orders_OrderServiceAsyncClient` (property or parameter).
                let known = self
                    .facts
                    .grpc
                    .iter()
                    .any(|g| matches!(g, GrpcFact::Client { service: s, .. } if *s == service));
                self.clients.entry(v).or_insert_with(|| service.clone());
                if !known {
                    let line = self.line(i);
                    self.facts.grpc.push(GrpcFact::Client {
                        service,
                        var: Some(v.to_string()),
                        line,
                    });
                }
            }
        }
    }

    /// The name an expression starting at `start` is assigned to: `let x = …`,
    /// `self.x = …`, `x = …`, `let x: T = …`.
    fn assigned_name(&self, start: usize) -> Option<&'t str> {
        let t = self.t;
        let mut k = start.checked_sub(1)?;
        if t.is(k, "await") || t.is(k, "try") {
            k = k.checked_sub(1)?;
        }
        if t.punct(k) != b'=' {
            return None;
        }
        let before = k.checked_sub(1)?;
        if let Some(name) = t.ident(before) {
            if before >= 2 && t.punct(before - 1) == b':' {
                return t.ident(before - 2);
            }
            return Some(name);
        }
        None
    }
}

// -- pass 2: declarations --------------------------------------------------------------------

/// Declarations go to the file's symbols.
impl Declares for Ex<'_, '_, '_> {
    fn symbols(&mut self) -> &mut Vec<Symbol> {
        &mut self.facts.symbols
    }
}

impl<'t> Ex<'t, '_, '_> {
    fn declarations(&mut self) {
        let mut work = vec![Region {
            a: 0,
            b: self.t.len(),
            container: None,
            string_enum: false,
        }];
        while let Some(r) = work.pop() {
            self.region(r, &mut work);
        }
    }

    fn region(&mut self, r: Region, work: &mut Vec<Region>) {
        let t = self.t;
        let b = r.b;
        let container = r.container.as_deref();
        let mut i = r.a;
        while i < b {
            if t.punct(i) == b'#' {
                // `#if os(iOS)`, `#endif`: compiler directives take their line.
                let line = self.line(i);
                while i < b && self.line(i) == line {
                    i += 1;
                }
                continue;
            }
            let (j, attr_line) = self.attributes(i, b);
            let site = Site::new(self.t, container, attr_line);
            i = j;
            let mut is_static = false;
            while let Some(m) = t.ident(i).filter(|m| MODIFIERS.contains(m)) {
                // `class Foo` is a declaration, `class func` a modifier.
                if m == "class"
                    && t.ident(i + 1)
                        .is_some_and(|n| !MODIFIERS.contains(&n) && !is_decl_keyword(n))
                {
                    break;
                }
                is_static |= m == "static" || m == "class";
                i += 1;
                // `private(set)`.
                if t.punct(i) == b'(' && t.ident(i + 1).is_some() && t.punct(i + 2) == b')' {
                    i += 3;
                }
            }
            if i >= b {
                break;
            }
            let next =
                match t.ident(i) {
                    Some("import") if container.is_none() => self.import(i, b),
                    Some(
                        kw @ ("class" | "struct" | "enum" | "protocol" | "actor" | "extension"),
                    ) if t.ident(i + 1).is_some() => self.type_decl(i, kw, site, work, b),
                    Some("func") => self.func(i, site, b),
                    Some("init") if matches!(t.punct(i + 1), b'(' | b'?' | b'!' | b'<') => {
                        self.init(i, site, b)
                    }
                    Some("typealias") if t.ident(i + 1).is_some() => {
                        let e = self.expr_end(i + 2, b);
                        let end_line = t.end_line(e.saturating_sub(1).max(i + 1));
                        self.declare(site, t.text(i + 1), SymbolKind::TypeAlias, i + 1, end_line);
                        e
                    }
                    Some(kw @ ("let" | "var")) if t.ident(i + 1).is_some() => {
                        self.binding(i, kw == "let", is_static, site, b)
                    }
                    Some("case") if container.is_some() => {
                        self.enum_case(i, r.string_enum, container.unwrap_or_default(), b)
                    }
                    _ => t.skip_group(i),
                };
            i = next.max(i + 1);
        }
    }

    /// `import X`, `@testable import X`, `import struct X.Y`.
    fn import(&mut self, i: usize, b: usize) -> usize {
        let t = self.t;
        let mut k = i + 1;
        if t.ident(k).is_some_and(|w| {
            matches!(
                w,
                "struct" | "class" | "enum" | "protocol" | "typealias" | "func" | "let" | "var"
            )
        }) && t.ident(k + 1).is_some()
        {
            k += 1;
        }
        let mut module = String::new();
        let line = self.line(i);
        while k < b && self.line(k) == line {
            if let Some(id) = t.ident(k) {
                module.push_str(id);
            } else if t.punct(k) == b'.' {
                module.push('.');
            } else {
                break;
            }
            k += 1;
        }
        if !module.is_empty() {
            self.facts
                .imports
                .push(Import::whole_module(module, None, line));
        }
        k
    }

    fn type_decl(
        &mut self,
        kw_at: usize,
        kw: &str,
        site: Site,
        work: &mut Vec<Region>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let name_idx = kw_at + 1;
        let mut name = t.text(name_idx).to_string();
        let mut j = name_idx + 1;
        // `extension Foo.Bar`.
        while kw == "extension" && t.punct(j) == b'.' && t.ident(j + 1).is_some() {
            name.push('.');
            name.push_str(t.text(j + 1));
            j += 2;
        }
        j = t.skip_angles(j, b);
        let mut inherits: Vec<&str> = Vec::new();
        let mut in_list = false;
        let (body, j) = super::cfamily::type_header(t, j, b, |j| {
            if t.punct(j) == b':' && !in_list {
                in_list = true;
            } else if t.is(j, "where") {
                in_list = false;
            } else if in_list
                && let Some(id) = t.ident(j)
                && t.punct(j + 1) != b'.'
            {
                inherits.push(id);
            }
        });
        let Some(open) = body else {
            return j.max(kw_at + 1);
        };
        let end = t.close(open).unwrap_or(b);
        if kw != "extension" {
            let kind = match kw {
                "struct" => SymbolKind::Struct,
                "enum" => SymbolKind::Enum,
                "protocol" => SymbolKind::Interface,
                _ => SymbolKind::Class,
            };
            let end_line = self.close_line(open);
            self.declare(site, &name, kind, name_idx, end_line);
        }
        for base in &inherits {
            if let Some(service) = generated_service(base, &PROVIDER_SUFFIXES) {
                let line = self.line(name_idx);
                self.facts.grpc.push(GrpcFact::Server {
                    service,
                    impl_type: Some(name.clone()),
                    line,
                });
            }
        }
        work.push(Region {
            a: open + 1,
            b: end,
            container: Some(name),
            string_enum: kw == "enum" && inherits.first() == Some(&"String"),
        });
        end + 1
    }

    /// The end line of a function-like declaration whose parameters open at `open`, and the
    /// index past it: the body `{ … }` when there is one (after `async throws -> T where …`),
    /// else the signature's last token.
    fn signature_end(&self, open: usize, b: usize) -> (u32, usize) {
        let t = self.t;
        let mut j = t.skip_group(open);
        let mut last = j.saturating_sub(1);
        while j < b {
            if t.punct(j) == b'{' {
                return (self.close_line(j), t.skip_group(j));
            }
            if matches!(t.punct(j), b'}' | b';' | b'@' | b'#')
                || t.ident(j).is_some_and(is_decl_keyword)
                || (self.breaks(last, j) && t.ident(j).is_some_and(|w| MODIFIERS.contains(&w)))
            {
                break;
            }
            last = j;
            j = t.skip_group(j).max(j + 1);
        }
        (t.end_line(last), last + 1)
    }

    fn func(&mut self, kw: usize, site: Site, b: usize) -> usize {
        let t = self.t;
        let name_idx = kw + 1;
        let Some(name) = t.ident(name_idx) else {
            // Operators (`static func == (…)`): skip the signature.
            let open = (kw + 1..b.min(kw + 6)).find(|&k| t.punct(k) == b'(');
            return open.map_or(kw + 1, |o| self.signature_end(o, b).1);
        };
        let open = t.skip_angles(name_idx + 1, b);
        if t.punct(open) != b'(' {
            return name_idx + 1;
        }
        let (end_line, next) = self.signature_end(open, b);
        let kind = if site.container.is_some() {
            SymbolKind::Method
        } else {
            SymbolKind::Function
        };
        self.declare(site, name, kind, name_idx, end_line);
        next
    }

    fn init(&mut self, kw: usize, site: Site, b: usize) -> usize {
        let t = self.t;
        let mut open = kw + 1;
        if matches!(t.punct(open), b'?' | b'!') {
            open += 1;
        }
        open = t.skip_angles(open, b);
        if t.punct(open) != b'(' {
            return kw + 1;
        }
        let (end_line, next) = self.signature_end(open, b);
        self.declare(site, "init", SymbolKind::Constructor, kw, end_line);
        next
    }

    /// `let x = …` / `var x: T = …` at the top level (a symbol) or `static let x = "…"` in a
    /// type (a constant); a `let` whose value the evaluator reads is a binding.
    fn binding(&mut self, kw: usize, is_let: bool, is_static: bool, site: Site, b: usize) -> usize {
        let t = self.t;
        let name_idx = kw + 1;
        let name = t.text(name_idx);
        let e = self.expr_end(name_idx + 1, b);
        let top_level = site.container.is_none();
        if !top_level && !is_static {
            // Instance properties are not symbols; computed bodies are skipped with the rest.
            return e;
        }
        let eq = (name_idx + 1..e).find(|&k| t.punct(k) == b'=' && !t.is(k, "=="));
        let value = eq
            .map(|q| self.value((q + 1, e)))
            .filter(|v| !v.is_dynamic());
        let kind = if is_let {
            SymbolKind::Constant
        } else {
            SymbolKind::Variable
        };
        if top_level || is_let {
            let end_line = t.end_line(e.saturating_sub(1).max(name_idx));
            self.declare(site, name, kind, name_idx, end_line);
        }
        if is_let && let Some(value) = value {
            let qualified = match site.container {
                Some(c) => format!("{c}.{name}"),
                None => name.to_string(),
            };
            let line = self.line(name_idx);
            self.facts.bindings.push(Binding {
                name: qualified,
                value,
                line,
            });
        }
        e
    }

    /// `case a, b(Int), c = "x"` in an enum body: enum values, and constants for the raw
    /// values of a `String` enum (a case without one is its own raw value).
    fn enum_case(&mut self, kw: usize, string_enum: bool, enum_name: &str, b: usize) -> usize {
        let t = self.t;
        let e = self.expr_end(kw + 1, b);
        for (x, y) in t.args_between(kw + 1, e) {
            let Some(member) = t.ident(x) else {
                continue;
            };
            super::cfamily::push_enum_value(&mut self.facts, t, member, x, enum_name);
            if !string_enum {
                continue;
            }
            let raw = if t.punct(x + 1) == b'=' {
                t.str_lit(x + 2)
                    .filter(|s| x + 3 == y && !s.raw.contains("\\("))
                    .map(|s| s.value().into_owned())
            } else if x + 1 == y {
                Some(member.to_string())
            } else {
                None
            };
            if let Some(value) = raw {
                let name = format!("{enum_name}.{member}");
                super::cfamily::push_lit(&mut self.facts, name, value, t.line(x));
            }
        }
        e
    }
}

fn is_decl_keyword(w: &str) -> bool {
    matches!(
        w,
        "func"
            | "init"
            | "deinit"
            | "var"
            | "let"
            | "case"
            | "subscript"
            | "typealias"
            | "associatedtype"
            | "struct"
            | "enum"
            | "protocol"
            | "extension"
            | "actor"
            | "import"
    )
}

// -- pass 3: uses ----------------------------------------------------------------------------

impl<'t> Ex<'t, '_, '_> {
    fn uses(&mut self) {
        let t = self.t;
        for p in 0..t.len() {
            if t.punct(p) != b'(' {
                continue;
            }
            let Some(c) = t.callee(p) else {
                continue;
            };
            let last = c.last();
            if let Some(r) = c.receiver()
                && let Some(service) = self.clients.get(r)
            {
                let line = self.line(p);
                self.facts
                    .push_grpc_call(service.clone(), r.to_string(), last.to_string(), line);
                continue;
            }
            match (c.len, c.first(), last) {
                (1, _, "URL" | "URLComponents")
                    if t.is(p + 1, "string")
                        && t.punct(p + 2) == b':'
                        && !self.url_sites.contains(&p) =>
                {
                    let arg = (p + 3, t.close_or_end(p));
                    if let Some(url) = self.url(arg, false) {
                        let line = self.line(p);
                        self.facts.http.push(HttpFact::Call {
                            method: None,
                            url,
                            line,
                        });
                    }
                }
                (2, "AF" | "Alamofire", "request") => self.alamofire(p, true),
                (2, "session", "request") => self.alamofire(p, false),
                _ => {}
            }
        }
    }

    /// `AF.request("https://…/orders", method: .post)`, `AF.request(URL(string: …)!)`. `sure`
    /// for `AF`/`Alamofire`; a `session.request` needs a URL-looking argument.
    fn alamofire(&mut self, p: usize, sure: bool) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, b)) = args.first() else {
            return;
        };
        let Some(url) = self.url((a, b), sure) else {
            return;
        };
        if t.kw(a, "URL") && t.punct(a + 1) == b'(' {
            // The request is the site; the `URL(string:)` inside it is not another one.
            self.url_sites.insert(a + 1);
        }
        let method = args.iter().find_map(|&(x, _)| {
            (t.is(x, "method") && t.punct(x + 1) == b':' && t.punct(x + 2) == b'.')
                .then(|| t.ident(x + 3))
                .flatten()
                .map(str::to_ascii_uppercase)
        });
        let line = self.line(p);
        self.facts.http.push(HttpFact::Call {
            method: method.or_else(|| Some("GET".to_string())),
            url,
            line,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{
        consts_at, decl_rows, every_prefix, extract_each, extract_junk,
        http_calls_borrowed as http_calls, junk_chars64, names, sampled_prefixes, sym,
    };

    const SRC: &str = r#"import Foundation
@testable import OrdersKit
import struct NIO.EventLoopGroup

/// Kafka-ish topics.
enum Topics: String {
    case orderCreated = "order.created"
    case orderPaid
    case shipped = "order.shipped", returned
}

enum Outcome<T> {
    case ok(T), failed(Error)
}

struct Config {
    static let baseURL = "http://orders:8080"
    static let timeout = 30
    let instance = "not a constant"
    var computed: String { "x" }
}

/// The order service.
@available(macOS 12, *)
final class OrderProvider: Orders_OrderServiceAsyncProvider {
    private let inventory: Inventory_InventoryServiceAsyncClient

    init(inventory: Inventory_InventoryServiceAsyncClient) {
        self.inventory = inventory
    }

    func createOrder(
        request: Orders_CreateOrderRequest,
        context: GRPCAsyncServerCallContext
    ) async throws -> Orders_CreateOrderResponse {
        _ = try await inventory.reserve(.with { $0.sku = request.sku })
        return .init()
    }

    class func make() -> OrderProvider { fatalError() }
    static func == (lhs: OrderProvider, rhs: OrderProvider) -> Bool { true }

    struct Nested {
        func inner() {}
    }
}

extension OrderProvider: CustomStringConvertible {
    var description: String { "provider" }
    func describe() -> String { description }
}

protocol Repository {
    associatedtype Item
    func find(id: String) async throws -> Item
    var count: Int { get }
}

actor Cache {
    func get(_ key: String) -> Data? { nil }
}

typealias Handler = (String) -> Void
let maxRetries = 3
var globalCounter = 0

func fetchOrders(base: String) async throws -> [Order] {
    let url = URL(string: "\(base)/api/orders/\(id)?x=1")!
    let other = URL(string: "https://payments.internal/payments/refunds")
    AF.request("https://api.example.com/v1/users", method: .post)
    let client = Orders_OrderServiceNIOClient(channel: channel)
    let reply = try await client.getOrder(req).response.get()
    // URL(string: "/commented") and class Commented {}
    let s = "func inString() {}"
    return []
}
#if DEBUG
func debugOnly() {}
#endif
"#;

    #[test]
    fn declarations_and_containers() {
        let f = extract("Sources/Orders/OrderProvider.swift", SRC);
        let got = decl_rows(&f);
        use SymbolKind::*;
        assert_eq!(
            got,
            vec![
                ("Topics", Enum, 6, 10, None),
                ("orderCreated", EnumValue, 7, 7, Some("Topics")),
                ("orderPaid", EnumValue, 8, 8, Some("Topics")),
                ("shipped", EnumValue, 9, 9, Some("Topics")),
                ("returned", EnumValue, 9, 9, Some("Topics")),
                ("Outcome", Enum, 12, 14, None),
                ("ok", EnumValue, 13, 13, Some("Outcome")),
                ("failed", EnumValue, 13, 13, Some("Outcome")),
                ("Config", Struct, 16, 21, None),
                ("baseURL", Constant, 17, 17, Some("Config")),
                ("timeout", Constant, 18, 18, Some("Config")),
                ("OrderProvider", Class, 25, 46, None),
                ("init", Constructor, 28, 30, Some("OrderProvider")),
                ("createOrder", Method, 32, 38, Some("OrderProvider")),
                ("make", Method, 40, 40, Some("OrderProvider")),
                ("Nested", Struct, 43, 45, Some("OrderProvider")),
                ("inner", Method, 44, 44, Some("Nested")),
                ("describe", Method, 50, 50, Some("OrderProvider")),
                ("Repository", Interface, 53, 57, None),
                ("find", Method, 55, 55, Some("Repository")),
                ("Cache", Class, 59, 61, None),
                ("get", Method, 60, 60, Some("Cache")),
                ("Handler", TypeAlias, 63, 63, None),
                ("maxRetries", Constant, 64, 64, None),
                ("globalCounter", Variable, 65, 65, None),
                ("fetchOrders", Function, 67, 76, None),
                ("debugOnly", Function, 78, 78, None),
            ]
        );
        assert_eq!(sym(&f, "Topics").doc_line, Some(5));
        assert_eq!(sym(&f, "OrderProvider").doc_line, Some(23));
        let modules: Vec<&str> = f.imports.iter().map(|i| i.module.as_str()).collect();
        assert_eq!(
            modules,
            vec!["Foundation", "OrdersKit", "NIO.EventLoopGroup"]
        );
    }

    #[test]
    fn string_constants_grpc_and_urls() {
        let f = extract("Sources/Orders/OrderProvider.swift", SRC);
        let consts = consts_at(&f);
        assert_eq!(
            consts,
            vec![
                ("Topics.orderCreated", "order.created", 7),
                ("Topics.orderPaid", "orderPaid", 8),
                ("Topics.shipped", "order.shipped", 9),
                ("Topics.returned", "returned", 9),
                ("Config.baseURL", "http://orders:8080", 17),
                // Every value the evaluator reads is a binding, numbers too; the shared
                // tracker also binds properties and top-level `var`s (names elsewhere resolve
                // against them).
                ("Config.timeout", "30", 18),
                ("Config.instance", "not a constant", 19),
                ("maxRetries", "3", 64),
                ("globalCounter", "0", 65),
            ]
        );
        assert_eq!(
            f.grpc,
            vec![
                GrpcFact::Server {
                    service: "OrderService".into(),
                    impl_type: Some("OrderProvider".into()),
                    line: 25
                },
                GrpcFact::Client {
                    service: "InventoryService".into(),
                    var: Some("inventory".into()),
                    line: 26
                },
                GrpcFact::Call {
                    service: Some("InventoryService".into()),
                    receiver: "inventory".into(),
                    method: "reserve".into(),
                    line: 36
                },
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("client".into()),
                    line: 71
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "client".into(),
                    method: "getOrder".into(),
                    line: 72
                },
            ]
        );
        // URLs are values as written: the host and query are kept, a parameter is a run-time
        // part, a name the file does not bind is left to the graph.
        assert_eq!(
            http_calls(&f),
            vec![
                (None, "{}/api/orders/{id}?x=1".to_string(), 68),
                (
                    None,
                    "https://payments.internal/payments/refunds".to_string(),
                    69
                ),
                (
                    Some("POST"),
                    "https://api.example.com/v1/users".to_string(),
                    70
                ),
            ]
        );
    }

    #[test]
    fn raw_and_multiline_strings_and_nested_comments() {
        let src = r##"/* outer /* inner */ class Hidden {} */
let raw = #"class InRaw { "quoted" }"#
let multi = """
    func inMultiline() {}
    """
struct Real {
    static let path = #"/orders/\d+"#
}
"##;
        let f = extract("x.swift", src);
        assert_eq!(names(&f), vec!["raw", "multi", "Real", "path"]);
        assert_eq!(sym(&f, "multi").end_line, 5);
        let c = f.bindings.iter().find(|c| c.name == "Real.path");
        assert_eq!(
            c.map(|c| c.value.as_lit().unwrap_or("?")),
            Some(r"/orders/\d+")
        );
    }

    const IDIOMS: &str = r#"import Alamofire

let base = ProcessInfo.processInfo.environment["ORDERS_URL"] ?? "http://orders:8080"

struct Api {
    static let baseURL = "http://carts:8080"
}

func load(id: String) {
    let url = URL(string: "\(base)/orders/\(id)")!
    URLSession.shared.dataTask(with: url) { _, _, _ in }.resume()
    AF.request(URL(string: "\(Api.baseURL)/carts")!, method: .delete)
    AF.request("\(base)/x")
    cache.get(id)
    let u = URL(string: base + "/" + id)
    let plain = URL(string: name)
}
"#;

    #[test]
    fn idioms_interpolation_environment_urlsession_alamofire() {
        let f = extract("Sources/Api.swift", IDIOMS);
        let c = |m: Option<&'static str>, u: &str, l: u32| (m, u.to_string(), l);
        assert_eq!(
            http_calls(&f),
            vec![
                // A top-level name stays a reference for the graph; a parameter is run-time.
                c(None, "{base}/orders/{}", 10),
                // The request is the site, with its method; its `URL(string:)` is not another.
                c(Some("DELETE"), "{Api.baseURL}/carts", 12),
                c(Some("GET"), "{base}/x", 13),
                // `cache.get(id)` is a lookup. A base and `"/" + x` alone: a URL with no
                // literal segment, which the graph never matches to a route. `URL(string:
                // name)` does not read like a URL.
                c(None, "{base}/{}", 15),
            ]
        );
        let base = f
            .bindings
            .iter()
            .find(|b| b.name == "base")
            .map(|b| &b.value);
        assert_eq!(
            base,
            Some(&Value::env("ORDERS_URL", Some("http://orders:8080".into())))
        );
        assert!(f.bindings.iter().any(|b| b.name == "Api.baseURL"));
    }

    #[test]
    fn idioms_truncated_and_non_ascii_never_panic() {
        every_prefix(extract, "x.swift", IDIOMS);
        let src = "let básé = \"http://ü\"\nfunc gét(ïd: String) {\n  AF.request(\"\\(básé)/ördérs/\\(ïd)\")\n  AF.request(\"\\(é\n}\n";
        every_prefix(extract, "x.swift", src);
        let f = extract("x.swift", src);
        assert_eq!(
            http_calls(&f).first(),
            Some(&(Some("GET"), "{básé}/ördérs/{}".to_string(), 3))
        );
    }

    #[test]
    fn truncated_and_junk_input_never_panics() {
        sampled_prefixes(extract, "x.swift", SRC, 5);
        extract_each(
            extract,
            "x.swift",
            &[
                "class",
                "class X:",
                "func",
                "func f(",
                "init(",
                "enum E { case",
                "@",
                "import",
                "let",
                "let x =",
                "extension",
                "#if",
                "URL(string:",
                "}}}))",
            ],
        );
        let alphabet: &[u8] = b"{}()[]<>/'\"`$@#*=;:,.?!&|\\\n abcXYZ019_-+classfuncletvarinit";
        extract_junk(extract, "junk.swift", &junk_chars64(alphabet, 0x1234_5678));
        let deep = "{".repeat(50_000) + &"struct A {".repeat(10_000);
        let _ = extract("deep.swift", &deep);
    }
}
