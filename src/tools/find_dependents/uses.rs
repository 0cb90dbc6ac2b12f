//! Using sites of an imported module: where a name the import binds is called or dereferenced.

use super::calls::is_word_byte;
use super::imports::last_segment;
use super::rows::{Row, push_call_row};
use crate::index::facts::{Import, Language};
use crate::index::snapshot::{FileEntry, Snapshot};

/// Using sites kept per importing file; the rest are counted on the last one.
const USES_PER_FILE: usize = 10;

/// The uses of an imported module in the files that import it: the name the import binds
/// (`import pika` → `pika`, `import x as y` → `y`, `from pika import BlockingConnection` →
/// `BlockingConnection`, `const express = require('express')` → `express`, Go
/// `import "…/amqp"` → `amqp`, PHP `use GuzzleHttp\Client` and Java `import a.b.HttpPost` →
/// the class name) called or dereferenced (`pika.BlockingConnection(`, `express()`,
/// `amqp.Dial(`, `new Client(`), outside comments and strings. Each is a `heuristic` row (a
/// local could shadow the name), at most [`USES_PER_FILE`] per file.
pub(super) fn using_sites(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let mut extra = Vec::new();
    let mut done = std::collections::HashSet::new();
    for r in rows.iter().filter(|r| !r.call && r.confidence == "exact") {
        let f = &snap.files[r.file as usize];
        if !done.insert((r.file, r.site)) {
            continue;
        }
        let Some(imp) = f
            .facts()
            .imports
            .iter()
            .find(|i| i.line == r.site && i.module == r.module)
        else {
            continue;
        };
        let whole = imp.module == target
            || imp.module.starts_with(&format!("{target}."))
            || imp.module.starts_with(&format!("{target}/"))
            || imp.module.starts_with(&format!("{target}\\"))
            || last_segment(&imp.module) == target;
        let bound: Vec<String> = if imp.names.iter().any(|n| n == target) {
            // `import { Orders as O }` binds `O`.
            imp.names
                .iter()
                .zip(imp.local_names())
                .filter(|(n, _)| *n == target)
                .map(|(_, local)| local.to_string())
                .collect()
        } else if whole {
            module_bindings(imp, f.lang)
        } else {
            continue;
        };
        let sites = use_sites(snap, f, imp, &bound, None);
        push_use_rows(&mut extra, f, r.file, sites, &r.module);
    }
    rows.extend(extra);
}

/// A qualified target that no import names, `q.Name` (`amqp.Channel`, `pika.BlockingConnection`):
/// its uses as `q.Name` in the files whose imports bind `q`, as `heuristic` rows like
/// [`using_sites`]'. Lines already listed are not listed twice.
pub(super) fn member_uses(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let Some((qualifier, member)) = target.rsplit_once('.') else {
        return;
    };
    let ident = |t: &str| !t.is_empty() && t.bytes().all(is_word_byte);
    if !ident(qualifier) || !ident(member) {
        return;
    }
    let listed: std::collections::HashSet<(u32, u32)> =
        rows.iter().map(|r| (r.file, r.site)).collect();
    let mut extra = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        // Every name `module_bindings` gives is the alias, a local name or a part of the
        // module string: this test, without allocating, passes over nearly every import of
        // the workspace on this per-query path.
        let binds = |imp: &&Import| {
            (imp.module.contains(qualifier)
                || imp.alias.as_deref() == Some(qualifier)
                || imp.local_names().any(|n| n == qualifier))
                && module_bindings(imp, f.lang).iter().any(|b| b == qualifier)
        };
        // One scan per file, however many of its imports bind the qualifier.
        let Some(imp) = f.facts().imports.iter().find(binds) else {
            continue;
        };
        let mut sites = use_sites(snap, f, imp, &[qualifier.to_string()], Some(member));
        sites.retain(|(line, _)| !listed.contains(&(fi as u32, *line)));
        push_use_rows(&mut extra, f, fi as u32, sites, &imp.module);
    }
    rows.extend(extra);
}

/// The names an import binds for the module as a whole, in the languages whose uses
/// [`use_sites`] can find: its alias and the names it imports, else Python's `import a.b`
/// (`a.b`), Go's package name (the last path segment, a `/v2` version skipped), PHP's and the
/// JVM's imported class (the last segment). C# `using` opens a namespace: no name is bound.
fn module_bindings(imp: &Import, lang: Language) -> Vec<String> {
    let mut bound: Vec<String> = Vec::new();
    let module = imp.module.as_str();
    match lang {
        Language::Python | Language::TypeScript | Language::JavaScript => {
            bound.extend(imp.alias.clone());
            bound.extend(imp.local_names().map(str::to_string));
            if lang == Language::Python && imp.names.is_empty() && imp.alias.is_none() {
                bound.push(module.to_string());
            }
        }
        Language::Go => match imp.alias.as_deref() {
            Some("_" | ".") => {}
            Some(a) => bound.push(a.to_string()),
            None => {
                let mut segments = module.rsplit('/');
                let last = segments.next().unwrap_or(module);
                let versioned = last.len() > 1
                    && last.starts_with('v')
                    && last[1..].bytes().all(|b| b.is_ascii_digit());
                let name = if versioned {
                    segments.next().unwrap_or(last)
                } else {
                    last
                };
                bound.push(name.to_string());
            }
        },
        Language::Php | Language::Java | Language::Kotlin | Language::Scala => {
            match imp.alias.clone() {
                Some(a) => bound.push(a),
                None => bound.push(last_segment(module).to_string()),
            }
            bound.extend(imp.local_names().map(str::to_string));
        }
        _ => {}
    }
    bound.retain(|b| !b.is_empty() && b != "*" && b != "_");
    bound
}

/// The lines of `f` (other than its import lines) where one of `bound` is called or
/// dereferenced, with the use as written (`pika.BlockingConnection`); with `member`, only
/// uses of `bound.member`. Comments and strings are skipped (the file is lexed).
fn use_sites(
    snap: &Snapshot,
    f: &FileEntry,
    imp: &Import,
    bound: &[String],
    member: Option<&str>,
) -> Vec<(u32, String)> {
    let mut sites = Vec::new();
    if bound.is_empty() {
        return sites;
    }
    let Some(syntax) = crate::index::lex::Syntax::of(f.lang) else {
        return sites;
    };
    let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
        return sites;
    };
    let python = f.lang == Language::Python;
    let lexed = crate::index::lex::lex(syntax, &text);
    for line in 1..=lexed.line_count() {
        let code = lexed.code_line(line);
        let head = code.trim_start();
        if line == imp.line
            || head.starts_with("import ")
            || (python && head.starts_with("from "))
            || (f.lang == Language::Php && head.starts_with("use "))
        {
            continue;
        }
        let b = code.as_bytes();
        let used = bound.iter().find_map(|name| {
            code.match_indices(name.as_str()).find_map(|(at, _)| {
                let before = at.checked_sub(1).map(|i| b[i]);
                let end = at + name.len();
                if before.is_some_and(|c| {
                    crate::index::lex::is_ident_byte(c) || c == b'.' || c == b'$' || c == b'\\'
                }) || b
                    .get(end)
                    .is_some_and(|&c| crate::index::lex::is_ident_byte(c))
                {
                    return None;
                }
                let rest = code[end..].trim_start();
                if let Some(m) = member {
                    let after = rest.strip_prefix('.')?.strip_prefix(m)?;
                    if after
                        .bytes()
                        .next()
                        .is_some_and(crate::index::lex::is_ident_byte)
                    {
                        return None;
                    }
                } else if !rest.starts_with(['.', '(']) && !rest.starts_with("::") {
                    return None;
                }
                // The use as written: the name and the members it reaches.
                let chain: String = code[end..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'))
                    .collect();
                Some(format!("{name}{}", chain.trim_end_matches(['.', ':'])))
            })
        });
        if let Some(expr) = used {
            sites.push((line, expr));
        }
    }
    sites
}

/// The rows of one file's use sites, at most [`USES_PER_FILE`]; the last kept one counts the
/// rest. `module` is what the import names (the declaration grouping follows it).
fn push_use_rows(
    rows: &mut Vec<Row>,
    f: &FileEntry,
    file: u32,
    sites: Vec<(u32, String)>,
    module: &str,
) {
    let total = sites.len();
    for (k, (line, expr)) in sites.into_iter().take(USES_PER_FILE).enumerate() {
        let more = if k + 1 == USES_PER_FILE && total > USES_PER_FILE {
            format!(" (+{} more uses in this file)", total - USES_PER_FILE)
        } else {
            String::new()
        };
        push_call_row(
            rows,
            f,
            file,
            line,
            &format!("uses {expr}{more}"),
            "heuristic",
        );
        if let Some(u) = rows.last_mut() {
            u.module = module.to_string();
        }
    }
}
