//! The Rails and Sinatra routing DSL (`get '/x', to: 'c#a'`, `resources :orders`, `namespace`
//! and `scope` prefixes): command calls read as routes.

use super::calls::push_event;
use super::*;
use crate::index::lang::script::{join, push_routes, rest_actions, singular};

/// A statement-level DSL call: Rails routes (`get "x", to: "c#a"`, `resources :orders`,
/// `namespace :api do`, `scope "/v1" do`), Sinatra routes (`get "/x" do`), Racecar
/// `subscribes_to "t"`, Karafka `topic :t do`. Returns the context of the block it opens.
pub(super) fn dsl_stmt(
    src: &Src,
    st: &mut State,
    stmt: &Stmt,
    toks: &[(usize, usize)],
    ctx: Ctx,
) -> Option<Ctx> {
    let code = src.code();
    let (ws, we) = toks[0];
    let word = &code[ws..we];
    let dsl = matches!(
        word,
        "subscribes_to" | "topic" | "namespace" | "scope" | "resources" | "match"
    ) || VERBS.contains(&word);
    if !dsl {
        return None;
    }
    // Arguments: in parentheses right after the word, or up to a `do`/`{` block.
    let (args_s, args_e) = command_args(src, stmt, toks, we);
    let after_args = if code.as_bytes().get(args_e) == Some(&b')') {
        args_e + 1
    } else {
        args_e
    };
    let has_do = toks
        .iter()
        .any(|&(s, e)| &code[s..e] == "do" && s >= args_e.min(stmt.end))
        || code[after_args.min(stmt.end)..stmt.end]
            .trim_start()
            .starts_with('{');
    let args = src.args(args_s, args_e);
    // The first argument, or its left side in `"path" => "c#a"`.
    let first_string = || {
        args.positional.first().and_then(|&(a, z)| {
            let z = code[a..z].find("=>").map_or(z, |p| a + p);
            src.plain_string(a, z)
        })
    };
    match word {
        "subscribes_to" => {
            for &(a, z) in &args.positional {
                push_event(src, st, EventRole::Consumer, "racecar", (a, z));
            }
            None
        }
        "topic" if has_do => {
            if let Some(&(a, z)) = args.positional.first() {
                push_event(src, st, EventRole::Consumer, "karafka", (a, z));
            }
            None
        }
        "namespace" | "scope" if ctx.in_routes || has_do => {
            let seg = first_string()
                .or_else(|| args.kw("path").and_then(|(a, z)| src.plain_string(a, z)))
                .unwrap_or_default();
            if st.prefixes[ctx.prefix].len() >= MAX_PREFIX {
                return None;
            }
            let prefix = join(&st.prefixes[ctx.prefix], &seg);
            st.prefixes.push(prefix);
            Some(Ctx {
                prefix: st.prefixes.len() - 1,
                in_routes: true,
                ..ctx
            })
        }
        "resources" if ctx.in_routes => {
            let mut nested = None;
            for &(a, z) in &args.positional {
                let Some(res) = src.plain_string(a, z) else {
                    continue;
                };
                resources_routes(src, st, &args, &res, ctx, stmt.line);
                if has_do && st.prefixes[ctx.prefix].len() < MAX_PREFIX {
                    let member = format!("{}/:{}_id", res, singular(&res));
                    let prefix = join(&st.prefixes[ctx.prefix], &member);
                    st.prefixes.push(prefix);
                    nested = Some(Ctx {
                        prefix: st.prefixes.len() - 1,
                        in_routes: true,
                        ..ctx
                    });
                }
            }
            nested
        }
        "match" if ctx.in_routes => {
            let path = first_string()?;
            let via = args
                .kw("via")
                .map(|(a, z)| list_strings(src, a, z))
                .unwrap_or_default();
            let handler = route_handler(src, &args);
            let path = join(&st.prefixes[ctx.prefix], &path);
            let methods = if via.is_empty() || via.iter().any(|v| v == "all") {
                vec!["ANY".to_string()]
            } else {
                via.iter().map(|v| v.to_ascii_uppercase()).collect()
            };
            push_routes(&mut st.facts, methods, &path, handler, stmt.line);
            None
        }
        w if VERBS.contains(&w) => {
            let rails =
                ctx.in_routes || args.kw("to").is_some() || code[args_s..args_e].contains("=>");
            if !(rails || has_do) {
                // `get "/x"` outside routes: an HTTParty class method call.
                if st.httparty
                    && let Some(&(a, z)) = args.positional.first()
                    && let Some(url) = src.url(a, z, true)
                {
                    st.facts.http.push(HttpFact::Call {
                        method: Some(w.to_ascii_uppercase()),
                        url,
                        line: stmt.line,
                    });
                }
                return None;
            }
            let path = first_string()?;
            let handler = route_handler(src, &args);
            st.facts.http.push(HttpFact::Route {
                method: w.to_ascii_uppercase(),
                path: join(&st.prefixes[ctx.prefix], &path),
                handler,
                line: stmt.line,
            });
            None
        }
        _ => None,
    }
}

/// The argument range of a command call whose name ends at `we`: `(…)` right after the name,
/// else up to the statement's `do` or `{` block (or its end).
pub(super) fn command_args(
    src: &Src,
    stmt: &Stmt,
    toks: &[(usize, usize)],
    we: usize,
) -> (usize, usize) {
    let code = src.code();
    if code.as_bytes().get(we) == Some(&b'(')
        && let Some(c) = src.br.close_of(we)
    {
        return (we + 1, c);
    }
    let mut end = stmt.end;
    if let Some(&(s, _)) = toks
        .iter()
        .find(|&&(s, e)| s > we && &code[s..e] == "do" && code.as_bytes()[s - 1] == b' ')
    {
        end = s;
    }
    // A `{ … }` block at the end (a hash argument would follow a comma).
    if let Some((p, b'}')) = lex::prev_non_space(code, end)
        && let Some(o) = src.br.open_of(p)
        && o > we
        && lex::prev_non_space(code, o).is_some_and(|(_, c)| c != b',' && c != b'(')
        && code[we..o].trim() != ""
    {
        end = o;
    }
    (we, end)
}

/// `to: "orders#show"`, `"x" => "orders#show"`, `controller: "c", action: "a"`.
pub(super) fn route_handler(src: &Src, args: &Args) -> Option<String> {
    if let Some((a, z)) = args.kw("to") {
        return src.plain_string(a, z);
    }
    let code = src.code();
    if let Some(&(a, z)) = args.positional.first()
        && let Some(p) = code[a..z].find("=>")
    {
        return src.plain_string(a + p + 2, z);
    }
    let action = args
        .kw("action")
        .and_then(|(a, z)| src.plain_string(a, z))?;
    match args
        .kw("controller")
        .and_then(|(a, z)| src.plain_string(a, z))
    {
        Some(c) => Some(format!("{c}#{action}")),
        None => Some(action),
    }
}

/// The strings/symbols of `[:a, :b]`, `%i[a b]` or a single `:a`.
pub(super) fn list_strings(src: &Src, s: usize, e: usize) -> Vec<String> {
    let (s, e) = src.trim(s, e);
    let code = src.code();
    let t = &code[s..e];
    if (t.starts_with("%i[") || t.starts_with("%w[")) && t.ends_with(']') {
        return t[3..t.len() - 1]
            .split_whitespace()
            .map(str::to_string)
            .collect();
    }
    if t.starts_with('[') && src.br.close_of(s) == Some(e - 1) {
        return common::split_top(code, s + 1, e - 1, b',', &src.br)
            .into_iter()
            .filter_map(|(a, z)| src.plain_string(a, z))
            .collect();
    }
    src.plain_string(s, e).into_iter().collect()
}

/// The standard REST routes of `resources :orders` (index, create, show, update, destroy),
/// filtered by `only:`/`except:`.
pub(super) fn resources_routes(
    src: &Src,
    st: &mut State,
    args: &Args,
    res: &str,
    ctx: Ctx,
    line: u32,
) {
    let only = args.kw("only").map(|(a, z)| list_strings(src, a, z));
    let except = args
        .kw("except")
        .map(|(a, z)| list_strings(src, a, z))
        .unwrap_or_default();
    let base = join(&st.prefixes[ctx.prefix], res);
    let member = format!("{base}/:id");
    for (action, method, path) in rest_actions(&base, &member, "create", ["PATCH", "PUT"]) {
        let wanted = only.as_ref().is_none_or(|o| o.iter().any(|a| a == action))
            && !except.iter().any(|a| a == action);
        if wanted {
            st.facts.http.push(HttpFact::Route {
                method: method.to_string(),
                path: path.clone(),
                handler: Some(format!("{res}#{action}")),
                line,
            });
        }
    }
}
