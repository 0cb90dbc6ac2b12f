//! CommonJS exports as bindings: `module.exports = { catalogueUrl: "http://catalogue" }` and
//! `exports.cartsUrl = …` give the names `catalogueUrl` and `cartsUrl`, so that
//! `endpoints.catalogueUrl` in a file that `require`s the module resolves like an ES `export
//! const`. `module.exports` is the module's whatever block assigns it (configuration modules
//! often sit in an IIFE), so the assignment counts at any depth.

use super::super::bind::Assignments;
use super::super::tokens::Tokens;
use super::super::value::{ExprRules, eval};
use crate::index::facts::{Binding, FileFacts};

/// Adds a binding per exported property to `facts` (values with run-time parts are left out,
/// as for any other binding; a name the file binds already keeps its binding).
pub(super) fn commonjs_exports(t: &Tokens, asg: &Assignments, facts: &mut FileFacts) {
    let rules = &ExprRules::JS;
    let mut found: Vec<Binding> = Vec::new();
    for i in 0..t.len() {
        if !t.is_punct(i, b'=') || i == 0 {
            continue;
        }
        // `module.exports = {…}` / `exports = {…}` / `module.exports.name = v` / `exports.name = v`.
        let (object, name) = match exports_target(t, i) {
            Some(target) => target,
            None => continue,
        };
        let rhs = i + 1;
        if object {
            if !t.is_punct(rhs, b'{') || t.close(rhs).is_none() {
                continue;
            }
            for (s, e) in t.args(rhs) {
                let Some(key) = t.ident(s).or_else(|| t.str_lit(s).map(|l| l.raw)) else {
                    continue;
                };
                let value = if s + 1 == e {
                    // `{ catalogueUrl }`: the value of the name in scope.
                    eval(t, (s, e), rules, asg)
                } else if t.is_punct(s + 1, b':') && s + 2 < e {
                    eval(t, (s + 2, e), rules, asg)
                } else {
                    continue;
                };
                if !value.is_dynamic() {
                    found.push(Binding {
                        name: key.to_string(),
                        value,
                        line: t.line(s),
                    });
                }
            }
        } else if let Some(name) = name
            && let Some(end) = statement_end(t, rhs)
        {
            let value = eval(t, (rhs, end), rules, asg);
            if !value.is_dynamic() {
                found.push(Binding {
                    name: name.to_string(),
                    value,
                    line: t.line(i - 1),
                });
            }
        }
    }
    for b in found {
        if !facts.bindings.iter().any(|o| o.name == b.name) {
            facts.bindings.push(b);
        }
    }
}

/// What the `=` at `i` assigns: `(true, None)` for the whole exports object, `(false,
/// Some(name))` for one exported name, `None` for anything else.
fn exports_target<'a>(t: &Tokens<'_, 'a>, i: usize) -> Option<(bool, Option<&'a str>)> {
    // A compound operator is its own token (`==`, `=>`, `+=`): a lone `=` only.
    let before = |k: usize| i.checked_sub(k);
    let at = |k: usize, s: &str| before(k).is_some_and(|j| t.is(j, s));
    let is_start = |k: usize| match before(k) {
        Some(0) => true,
        Some(j) => !t.is_punct(j - 1, b'.'),
        None => false,
    };
    // `module.exports = ` / `exports = `.
    if at(1, "exports") && ((at(2, ".") && at(3, "module") && is_start(3)) || is_start(1)) {
        return Some((true, None));
    }
    // `module.exports.name = ` / `exports.name = `.
    let name = before(1).and_then(|j| t.ident(j))?;
    if !at(2, ".") || !at(3, "exports") {
        return None;
    }
    if (at(4, ".") && at(5, "module") && is_start(5)) || is_start(3) {
        return Some((false, Some(name)));
    }
    None
}

/// The longest exported value read, in tokens: an address is a few, and the bound keeps a file
/// of chained or unclosed assignments (`exports.a = exports.a = …`) linear.
const MAX_VALUE_TOKENS: usize = 256;

/// The end of the expression statement starting at `s`: the first `;`, or the first token on
/// a new line outside brackets; `None` past [`MAX_VALUE_TOKENS`].
fn statement_end(t: &Tokens, s: usize) -> Option<usize> {
    let mut k = s;
    while k < t.len() && k - s <= MAX_VALUE_TOKENS {
        if t.is_punct(k, b';') || (k > s && t.tok(k).is_some_and(|x| x.nl_before)) {
            return Some(k);
        }
        k = match t.close(k) {
            Some(c) => c + 1,
            None => k + 1,
        };
    }
    (k - s <= MAX_VALUE_TOKENS).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::super::extract;
    use crate::index::facts::Value;

    fn bound<'f>(f: &'f crate::index::facts::FileFacts, name: &str) -> Option<&'f Value> {
        f.bindings.iter().find(|b| b.name == name).map(|b| &b.value)
    }

    #[test]
    fn chained_and_unclosed_exports_are_read_in_bounded_time() {
        // Each `=` of `exports.a = exports.a = … "x"` read its statement to the end: a 20 000
        // link chain took seconds (quadratic); a value is read up to a bound now.
        let chain = format!(
            "{}\"x\"\nexports.ok = \"http://ok\"\n",
            "exports.a = ".repeat(20_000)
        );
        let f = extract("config.js", &chain);
        assert_eq!(bound(&f, "ok").and_then(|v| v.as_lit()), Some("http://ok"));
        let unclosed = format!(
            "exports.ok = \"http://ok\";\n{}",
            "exports.a = f(".repeat(20_000)
        );
        let f = extract("config.js", &unclosed);
        assert_eq!(bound(&f, "ok").and_then(|v| v.as_lit()), Some("http://ok"));
        // A value longer than the bound is no binding.
        let long = format!("exports.long = {}\"a\"\n", "\"a\" + ".repeat(300));
        assert!(bound(&extract("config.js", &long), "long").is_none());
    }

    #[test]
    fn module_exports_properties_are_bindings_at_any_depth() {
        let src = r#"(function (){
  'use strict';
  var util = require('util');
  var domain = "";
  var base = "http://orders";
  module.exports = {
    catalogueUrl:  util.format("http://catalogue%s", domain),
    cartsUrl:      "http://carts/carts",
    "tags-url":    'http://catalogue/tags',
    base,
    handler:       function () { return 1 },
  };
}());
exports.usersUrl = "http://users/customers"
module.exports.payUrl = process.env.PAY_URL || "http://payment/paymentAuth";
other.exports = { notMine: "x" };
"#;
        let f = extract("api/endpoints.js", src);
        assert_eq!(
            bound(&f, "cartsUrl").and_then(|v| v.as_lit()),
            Some("http://carts/carts")
        );
        assert_eq!(
            bound(&f, "tags-url").and_then(|v| v.as_lit()),
            Some("http://catalogue/tags")
        );
        assert_eq!(
            bound(&f, "usersUrl").and_then(|v| v.as_lit()),
            Some("http://users/customers")
        );
        assert!(bound(&f, "catalogueUrl").is_some(), "{:?}", f.bindings);
        assert!(bound(&f, "base").is_some(), "{:?}", f.bindings);
        assert!(bound(&f, "payUrl").is_some(), "{:?}", f.bindings);
        assert!(bound(&f, "handler").is_none());
        assert!(bound(&f, "notMine").is_none());
    }
}
