//! Pass 2b, nested declarations: the functions declared inside other functions, at any depth,
//! which pass 2 ([`super::declarations`]) does not enter. AngularJS, jQuery and Node files
//! declare most of their code this way (`app.controller('cart', function ($scope) {
//! function load() {…}; $scope.buy = function () {…} })`), and a caller inside one is
//! attributed to the innermost declaration around it.
//!
//! One linear scan over the tokens with an explicit stack of the `{…}` bodies open at the
//! current token, each named after what it belongs to (a function, a class or namespace, a
//! method, an AngularJS registration) or anonymous (a callback, an IIFE). Recorded, with the
//! innermost named body as `container`:
//!
//! - inside a function body (named or anonymous): `function f(…) {…}` statements,
//!   `const f = function/arrow` bindings, and `this.f = …` / `$scope.f = …` / `vm.f = …`
//!   statements assigning a function (methods, kind `Method`);
//! - anywhere: `X.prototype.f = function …` (a method of `X`) and AngularJS registrations
//!   `m.controller('name', function …)` (also `factory`, `service`, `directive`, `filter`,
//!   `provider`, `component`), whose function gives its body the registered name.
//!
//! Anonymous functions (`.then(function (res) {…})`, `x => …`, IIFEs) are never declarations,
//! and neither are the locals, object-literal members or classes of a function body: the pass
//! stays bounded to what a reader would look up by name. A function directly inside a
//! top-level IIFE has no container (the IIFE is the file's module pattern).

use std::collections::HashMap;

use super::declarations::FnBody;
use super::{Declares, Ex, Site};
use crate::index::facts::SymbolKind;

/// AngularJS module methods that register a named component with a factory function.
const NG_REGISTRATIONS: [&str; 7] = [
    "controller",
    "factory",
    "service",
    "directive",
    "filter",
    "provider",
    "component",
];

/// Words followed by `(…) {` that are not a method.
const NOT_METHODS: [&str; 9] = [
    "if", "for", "while", "switch", "catch", "with", "function", "return", "super",
];

/// What a `{…}` body belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Body {
    /// A function or method: declarations in it are nested.
    Function,
    /// A class or namespace body, an object or type literal, a block: what it declares
    /// directly is pass 2's (or nothing).
    Other,
}

/// An open body: the token closing it, its name (none when anonymous), what it is.
struct Open {
    close: usize,
    name: Option<String>,
    body: Body,
}

/// Names given to bodies (by the index of their `{`) before the scan reaches them.
type Named = HashMap<usize, (Option<String>, Body)>;

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn nested_declarations(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut named: Named = HashMap::new();
        let mut open: Vec<Open> = Vec::new();
        for j in 0..n {
            while open.last().is_some_and(|o| o.close < j) {
                open.pop();
            }
            if t.is(j, "{") {
                let (name, body) = named.remove(&j).unwrap_or((None, Body::Other));
                let close = t.close(j).unwrap_or(n);
                open.push(Open { close, name, body });
                continue;
            }
            if t.is(j, "=>") && t.is(j + 1, "{") {
                // An arrow with a block body: an anonymous function unless named already.
                named.entry(j + 1).or_insert((None, Body::Function));
                continue;
            }
            let Some(word) = t.ident(j) else {
                continue;
            };
            let in_function = open.iter().any(|o| o.body == Body::Function);
            let container = open.iter().rev().find_map(|o| o.name.as_deref());
            let stmt_start = self.stmt_start(j);
            match word {
                "function" => {
                    self.function_keyword(j, stmt_start, in_function, container, &mut named);
                }
                "class" | "namespace" | "module" if stmt_start && t.ident(j + 1).is_some() => {
                    let mut k = j + 2;
                    while k < n && !t.is(k, "{") && !t.is(k, ";") && !t.is(k, "}") {
                        k = t.skip_group(k).max(k + 1);
                    }
                    if t.is(k, "{") {
                        named.insert(k, (Some(t.text(j + 1).to_string()), Body::Other));
                    }
                }
                "const" | "let" | "var" if t.ident(j + 1).is_some() && t.is(j + 2, "=") => {
                    if let Some(v) = self.fn_value_body(j + 3, n) {
                        let name = t.text(j + 1);
                        if in_function {
                            let end_line = self.value_end_line(j + 3, v);
                            let c = container.map(str::to_string);
                            self.push_nested(name, SymbolKind::Function, j + 1, end_line, c);
                        }
                        name_body(&mut named, v, name);
                    }
                }
                "prototype"
                    if j >= 2
                        && t.is(j - 1, ".")
                        && t.ident(j - 2).is_some()
                        && self.stmt_start(j - 2)
                        && t.is(j + 1, ".")
                        && t.ident(j + 2).is_some()
                        && t.is(j + 3, "=") =>
                {
                    // `X.prototype.f = function …`: a method of `X`, at any depth.
                    if let Some(v) = self.fn_value_body(j + 4, n) {
                        let (class, name) = (t.text(j - 2).to_string(), t.text(j + 2));
                        let end_line = self.value_end_line(j + 4, v);
                        self.push_nested(name, SymbolKind::Method, j + 2, end_line, Some(class));
                        name_body(&mut named, v, name);
                    }
                }
                _ if stmt_start
                    && t.is(j + 1, ".")
                    && t.ident(j + 2).is_some()
                    && t.is(j + 3, "=")
                    && !t.is(j + 2, "prototype") =>
                {
                    self.member_assignment(j, word, in_function, container, &mut named);
                }
                _ if NG_REGISTRATIONS.contains(&word)
                    && j >= 1
                    && t.is(j - 1, ".")
                    && t.is(j + 1, "(")
                    && t.is(j + 3, ",") =>
                {
                    if let Some(reg) = t.str_value(j + 2) {
                        self.ng_registration(j, &reg, &mut named);
                    }
                }
                _ if t.is(j + 1, "(")
                    && !NOT_METHODS.contains(&word)
                    && open.last().is_some_and(|o| o.body == Body::Other) =>
                {
                    // A method shape `m(…) {` / `m(…): T {` in a class body or an object
                    // literal names its body; pass 2 records class methods.
                    let Some(pclose) = t.close(j + 1) else {
                        continue;
                    };
                    let body = if t.is(pclose + 1, "{") {
                        Some(pclose + 1)
                    } else if t.is(pclose + 1, ":") {
                        self.body_open_after(pclose + 1, n)
                    } else {
                        None
                    };
                    if let Some(b) = body {
                        let name = match open.last().and_then(|o| o.name.as_deref()) {
                            Some(class) => format!("{class}.{word}"),
                            None => word.to_string(),
                        };
                        named.insert(b, (Some(name), Body::Function));
                    }
                }
                _ if t.is(j + 1, ":") && !open.is_empty() => {
                    // `key: function (…) {…}` in an object literal: names the body only.
                    if let Some(FnBody::Block(b)) = self.fn_value_body(j + 2, n) {
                        named
                            .entry(b)
                            .or_insert((Some(word.to_string()), Body::Function));
                    }
                }
                _ => {}
            }
        }
    }

    /// `function` at token `j`: a named function declared inside a function is a nested
    /// symbol; its body is named (an anonymous one only marked a function body).
    fn function_keyword(
        &mut self,
        j: usize,
        stmt_start: bool,
        in_function: bool,
        container: Option<&str>,
        named: &mut Named,
    ) {
        let t = self.t;
        let n = t.len();
        let mut k = j + 1;
        if t.is(k, "*") {
            k += 1;
        }
        let Some(FnBody::Block(body)) = self.fn_value_body(j, n) else {
            return;
        };
        match t.ident(k).filter(|_| stmt_start) {
            Some(name) => {
                if in_function {
                    let end_line = self.close_line(body);
                    let c = container.map(str::to_string);
                    self.push_nested(name, SymbolKind::Function, k, end_line, c);
                }
                named.insert(body, (Some(name.to_string()), Body::Function));
            }
            None => {
                named.entry(body).or_insert((None, Body::Function));
            }
        }
    }

    /// `this.f = …`, `$scope.f = …`, `vm.f = …` at token `j` (`word` the object) assigning a
    /// function: a method inside a function (`this.f` in a method `C.m` is a member of `C`);
    /// `exports.f = …` is pass 2's. The function's body is named either way.
    fn member_assignment(
        &mut self,
        j: usize,
        word: &str,
        in_function: bool,
        container: Option<&str>,
        named: &mut Named,
    ) {
        let t = self.t;
        let n = t.len();
        if let Some(v) = self.fn_value_body(j + 4, n) {
            let name = t.text(j + 2);
            if in_function && !matches!(word, "exports" | "module") {
                // `this.f` in a method `C.m` is a member of `C`.
                let c = match container {
                    Some(c) if word == "this" => c.rsplit_once('.').map_or(c, |(class, _)| class),
                    c => c.unwrap_or_default(),
                };
                let c = (!c.is_empty()).then(|| c.to_string());
                let end_line = self.value_end_line(j + 4, v);
                self.push_nested(name, SymbolKind::Method, j + 2, end_line, c);
            }
            name_body(named, v, name);
        }
    }

    /// True when token `i` starts a statement (after `export`, `default`, `async`, `declare`
    /// or `abstract`): the file's first token, after `{`, `}` or `;`, or on a new line that
    /// the previous token does not continue.
    fn stmt_start(&self, mut i: usize) -> bool {
        let t = self.t;
        while i > 0
            && matches!(
                t.ident(i - 1),
                Some("export" | "default" | "async" | "declare" | "abstract")
            )
        {
            i -= 1;
        }
        match i.checked_sub(1) {
            None => true,
            Some(p) => t.is(p, "{") || t.is(p, "}") || t.is(p, ";") || self.breaks(p, i),
        }
    }

    /// `m.controller('name', function (…) {…})` (or `['$scope', function …]`) at `j`: the
    /// registered name is a declaration and names the function's body.
    fn ng_registration(&mut self, j: usize, reg: &str, named: &mut Named) {
        let t = self.t;
        if reg.is_empty() || reg.len() > 128 || reg.contains(char::is_whitespace) {
            return;
        }
        let Some(close) = t.close(j + 1) else {
            return;
        };
        let args = t.args(j + 1);
        let Some(&(a, e)) = args.get(1) else {
            return;
        };
        let f = if t.is(a, "[") {
            match t.args(a).last() {
                Some(&(fa, _)) => fa,
                None => return,
            }
        } else {
            a
        };
        let Some(FnBody::Block(body)) = self.fn_value_body(f, e.max(f + 1).min(close)) else {
            return;
        };
        let end_line = self.close_line(body);
        self.push_nested(reg, SymbolKind::Function, j + 2, end_line, None);
        named.insert(body, (Some(reg.to_string()), Body::Function));
    }

    fn push_nested(
        &mut self,
        name: &str,
        kind: SymbolKind,
        name_tok: usize,
        end_line: u32,
        container: Option<String>,
    ) {
        let site = Site::new(self.t, container.as_deref(), None);
        self.declare(site, name, kind, name_tok, end_line);
    }

    /// The last line of the function value at `v` with body `body`.
    fn value_end_line(&self, v: usize, body: FnBody) -> u32 {
        match body {
            FnBody::Block(b) => self.close_line(b),
            FnBody::Expr(arrow) => {
                let e = self.expr_end(arrow + 1, self.t.len(), true);
                self.last_line(e.saturating_sub(1).max(arrow).max(v))
            }
        }
    }
}

/// Names the block body of a function value.
fn name_body(named: &mut Named, v: FnBody, name: &str) {
    if let FnBody::Block(b) = v {
        named.insert(b, (Some(name.to_string()), Body::Function));
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::index::facts::SymbolKind::{Function, Method};
    use crate::index::lang::test_support::{
        assert_declared_once, decl_rows, decls_named, every_prefix, extract_each,
    };

    #[test]
    fn angular_controllers_and_their_functions() {
        let src = r#"(function(angular) {
    var app = angular.module('shop', []);
    app.controller('productform', function($scope, $http) {
        $scope.rate = function(score) {
            $http.get('/api/rate').then((res) => {
                loadRating(res.sku);
            }).catch(function (e) {
                console.log(e);
            });
        };
        function loadRating(sku) {
            return 1;
        }
        const pick = (x) => x * 2;
        var local = 3;
    });
    app.factory('currentUser', ['$http', function($http) {
        this.reset = function() {};
        return {};
    }]);
    function moduleHelper() {}
})(window.angular);
"#;
        let f = extract("web/static/js/controller.js", src);
        assert_declared_once(
            &f,
            &[
                ("productform", Function, 3, 16, None),
                ("rate", Method, 4, 10, Some("productform")),
                ("loadRating", Function, 11, 13, Some("productform")),
                ("pick", Function, 14, 14, Some("productform")),
                ("currentUser", Function, 17, 20, None),
                ("reset", Method, 18, 18, Some("currentUser")),
                // A function directly in the file's IIFE has no container.
                ("moduleHelper", Function, 21, 21, None),
            ],
        );
        // Locals and anonymous callbacks are not declarations.
        assert!(decls_named(&f, "local").is_empty());
        assert!(decls_named(&f, "app").is_empty());
        let d = decl_rows(&f);
        assert_eq!(d.len(), 7, "{d:?}");
    }

    #[test]
    fn functions_in_functions_methods_and_prototypes() {
        let src = r#"export function outer(a: number): number {
  function inner() { return a; }
  const arrow = async (x: string) => {
    function deeper() {}
  };
  return inner();
}
export class Cart {
  total(items: Item[]): number {
    const sum = function () { return 0; };
    return sum();
  }
}
function Widget(el) {
  this.render = function () {};
}
Widget.prototype.destroy = function () {};
const api = {
  load() { function parse() {} },
};
"#;
        let f = extract("src/cart.ts", src);
        assert_declared_once(
            &f,
            &[
                ("outer", Function, 1, 7, None),
                ("inner", Function, 2, 2, Some("outer")),
                ("arrow", Function, 3, 5, Some("outer")),
                ("deeper", Function, 4, 4, Some("arrow")),
                ("sum", Function, 10, 10, Some("Cart.total")),
                ("render", Method, 15, 15, Some("Widget")),
                ("destroy", Method, 17, 17, Some("Widget")),
                ("parse", Function, 19, 19, Some("load")),
            ],
        );
        // Pass 2's declarations are not recorded twice.
        for name in ["total", "api", "Widget"] {
            assert_eq!(decls_named(&f, name).len(), 1, "{name}");
        }
    }

    #[test]
    fn callbacks_iifes_and_expressions_are_not_declarations() {
        let src = r#"function main() {
  fetch(url).then(function onDone(res) { return res; });
  items.forEach((it) => { it.x = function () {}; });
  const v = cond ? function () {} : null;
  (function () { var hidden = 1; })();
  !function named() {}();
  return function made() {};
}
"#;
        let f = extract("src/main.js", src);
        let d = decl_rows(&f);
        // `it.x = …` inside a callback is a statement of a function body: a method.
        let names: Vec<&str> = d.iter().map(|s| s.0).collect();
        assert_eq!(names, ["main", "x"], "{d:?}");
    }

    #[test]
    fn non_ascii_names_and_unterminated_input() {
        let src = "function äußere() {\n  function grüß() {}\n  const ñ = () => {\n";
        let f = extract("src/u.js", src);
        assert_eq!(
            decls_named(&f, "grüß").first().map(|s| s.4),
            Some(Some("äußere"))
        );
        assert_eq!(decls_named(&f, "ñ").first().map(|s| s.1), Some(Function));
        every_prefix(extract, "src/u.js", src);
        extract_each(
            extract,
            "src/j.ts",
            &[
                "function",
                "function f(",
                "x.prototype.",
                "a.controller('x',",
                "a.controller('x', [",
                "a.controller('', function(){ function f(){} })",
                "{ m() { this.a = ",
                "=> {",
                "class {",
            ],
        );
    }
}
