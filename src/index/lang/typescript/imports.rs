//! Imports and re-exports (pass 1): `import … from`, `import x = require(…)`, `export … from`
//! barrels and CommonJS `require`, recorded as `Import` facts with the names they bring in.

use super::Ex;
use crate::index::facts::Import;

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn push_import(
        &mut self,
        module: String,
        names: Vec<String>,
        alias: Option<String>,
        at: usize,
        reexport: bool,
    ) {
        self.push_import_renamed(
            module,
            Names {
                names,
                renamed: Vec::new(),
            },
            alias,
            at,
            reexport,
        );
    }

    fn push_import_renamed(
        &mut self,
        module: String,
        names: Names,
        alias: Option<String>,
        at: usize,
        reexport: bool,
    ) {
        let line = self.line(at);
        let import = Import {
            module,
            names: names.names,
            alias,
            line,
            reexport,
            renamed: names.renamed,
        };
        for n in import.local_names() {
            self.imported.insert(n.to_string());
        }
        self.facts.imports.push(import);
    }

    /// `{ a, b as c, type D, default as E }` at `open`: the imported (original) names, and
    /// the local name of each one bound under another (`b` → `c`).
    fn named_specifiers(&self, open: usize, out: &mut Names) {
        let t = self.t;
        for (a, e) in t.args(open) {
            let mut k = a;
            if t.is(k, "type") && t.ident(k + 1).is_some() && !t.is(k + 1, "as") {
                k += 1;
            }
            if let Some(name) = t.ident(k).or_else(|| t.str_lit(k).map(|s| s.raw))
                && k < e
            {
                if t.is(k + 1, "as")
                    && let Some(local) = t.ident(k + 2)
                    && local != name
                {
                    out.renamed.push((name.to_string(), local.to_string()));
                }
                out.names.push(name.to_string());
            }
        }
    }

    /// `import … from 'm'`, `import 'm'`, `import x = require('m')` at `i`.
    pub(super) fn import_stmt(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        if let Some(m) = t.str_value(k) {
            self.push_import(m.into_owned(), Vec::new(), None, i, false);
            return;
        }
        if t.is(k, "type") && !t.is(k + 1, "from") && !t.is(k + 1, "=") && !t.is(k + 1, ",") {
            k += 1;
        }
        let mut names = Names::default();
        let mut alias = None;
        let stop = (k + 64).min(t.len());
        while k < stop {
            if t.is(k, "from") {
                if let Some(m) = t.str_value(k + 1) {
                    self.push_import_renamed(m.into_owned(), names, alias, i, false);
                }
                return;
            }
            if t.is(k, "{") {
                self.named_specifiers(k, &mut names);
                k = t.skip_group(k);
                continue;
            }
            if t.is(k, "*") && t.is(k + 1, "as") {
                alias = t.ident(k + 2).map(str::to_string);
                k += 3;
                continue;
            }
            if t.is(k, "=") && t.is(k + 1, "require") && t.is(k + 2, "(") {
                if let Some(m) = t.str_value(k + 3) {
                    let alias = t.ident(k - 1).map(str::to_string);
                    self.push_import(m.into_owned(), Vec::new(), alias, i, false);
                }
                return;
            }
            if let Some(id) = t.ident(k) {
                if t.is(k + 1, "=") {
                    k += 1;
                    continue;
                }
                names.names.push(id.to_string());
                k += 1;
                continue;
            }
            if t.is(k, ",") {
                k += 1;
                continue;
            }
            return;
        }
    }

    /// `export * from 'm'`, `export * as ns from 'm'`, `export { a, b as c } from 'm'`.
    pub(super) fn export_from(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        if t.is(k, "type") {
            k += 1;
        }
        let mut names = Names::default();
        let (alias, after) = if t.is(k, "*") {
            if t.is(k + 1, "as") {
                (t.ident(k + 2).map(str::to_string), k + 3)
            } else {
                (None, k + 1)
            }
        } else if t.is(k, "{") {
            self.named_specifiers(k, &mut names);
            (None, t.skip_group(k))
        } else {
            return;
        };
        if t.is(after, "from")
            && let Some(m) = t.str_value(after + 1)
        {
            self.push_import_renamed(m.into_owned(), names, alias, i, true);
        }
    }

    /// `require('m')`, bound to `const x =` (alias) or `const { a, b: c } =` (names).
    pub(super) fn require(&mut self, i: usize) {
        let t = self.t;
        let Some(m) = t.str_value(i + 2) else {
            return;
        };
        if i >= 3 && t.is(i - 3, "import") {
            // `import fs = require('fs')`: recorded by the import statement.
            return;
        }
        let mut names = Names::default();
        let mut alias = None;
        if i >= 1 && t.is(i - 1, "=") && i >= 2 {
            if let Some(id) = t.ident(i - 2) {
                alias = Some(id.to_string());
            } else if t.is(i - 2, "}") {
                // Walk back to the destructuring `{`.
                let mut k = i - 2;
                let mut steps = 0;
                while k > 0 && !t.is(k, "{") && steps < 256 {
                    k -= 1;
                    steps += 1;
                }
                if t.is(k, "{") && t.close(k) == Some(i - 2) {
                    for (a, _) in t.args(k) {
                        if let Some(id) = t.ident(a) {
                            // `{ resolve: res }` binds `res` to the module's `resolve`.
                            if t.is(a + 1, ":")
                                && let Some(local) = t.ident(a + 2)
                                && local != id
                            {
                                names.renamed.push((id.to_string(), local.to_string()));
                            }
                            names.names.push(id.to_string());
                        }
                    }
                }
            }
        }
        self.push_import_renamed(m.into_owned(), names, alias, i, false);
    }
}

/// The names an import brings in, with those bound under another local name.
#[derive(Default)]
pub(super) struct Names {
    names: Vec<String>,
    renamed: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;

    #[test]
    fn imports_requires_and_reexports() {
        let src = r#"import express from 'express';
import React, { useState, useEffect as ue } from "react";
import * as grpc from '@grpc/grpc-js';
import type { Order, Item as OrderItem } from './types';
import { type Foo, Bar } from '../foo';
import './polyfill';
import fs = require('fs');
const { join, resolve: res } = require('path');
const lodash = require('lodash');
require('dotenv/config');
export * from './models';
export * as utils from './utils';
export { a, b as c } from './ab';
export type { T } from './t';
export { local };
async function lazy() { return import('./lazy'); }
import.meta.url;
"#;
        let f = extract("src/index.ts", src);
        let got = imports(&f);
        assert_eq!(
            got,
            vec![
                ("express", vec!["express"], None, 1, false),
                (
                    "react",
                    vec!["React", "useState", "useEffect"],
                    None,
                    2,
                    false
                ),
                ("@grpc/grpc-js", vec![], Some("grpc"), 3, false),
                ("./types", vec!["Order", "Item"], None, 4, false),
                ("../foo", vec!["Foo", "Bar"], None, 5, false),
                ("./polyfill", vec![], None, 6, false),
                ("fs", vec![], Some("fs"), 7, false),
                ("path", vec!["join", "resolve"], None, 8, false),
                ("lodash", vec![], Some("lodash"), 9, false),
                ("dotenv/config", vec![], None, 10, false),
                ("./models", vec![], None, 11, true),
                ("./utils", vec![], Some("utils"), 12, true),
                ("./ab", vec!["a", "b"], None, 13, true),
                ("./t", vec!["T"], None, 14, true),
                ("./lazy", vec![], None, 16, false),
            ]
        );
        assert!(!has_sym(&f, "lodash"));
        let renamed: Vec<_> = f.imports.iter().flat_map(|i| i.renamed.clone()).collect();
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            renamed,
            vec![
                pair("useEffect", "ue"),
                pair("Item", "OrderItem"),
                pair("resolve", "res"),
                pair("b", "c"),
            ]
        );
    }
}
