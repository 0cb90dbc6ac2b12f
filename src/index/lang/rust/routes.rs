//! axum and actix routes (`.route`, `.nest`, `web::scope`, `web::resource`) and reqwest calls,
//! read from the token view after the item walk.

use super::*;

/// How many routers built in variables and nested later a file's prefixes follow.
const MAX_NESTED_VARS: usize = 64;

impl<'t, 'a> Rs<'t, '_, 'a> {
    /// axum `.route("/p", get(h).post(h2))` and actix `.route("/p", web::get().to(h))`.
    pub(super) fn route_call(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let [arg, router] = args[..] else {
            return;
        };
        let Some(path) = self.path_arg(arg).filter(|p| p.starts_with('/')) else {
            return;
        };
        let full = join_path(&self.prefix(k), &path);
        self.method_router(router, &full, t.line(k));
    }

    /// Every `get(h)` / `.post(h)` / `web::get().to(h)` at the top level of a method router.
    pub(super) fn method_router(&mut self, (s, e): (usize, usize), path: &str, line: u32) {
        let t = self.t;
        let mut k = s;
        while k < e {
            if let Some(m) = t.ident(k)
                && ROUTE_METHODS.contains(&m)
                && t.is_punct(k + 1, b'(')
            {
                let open = k + 1;
                let close = t.close(open).unwrap_or(e);
                let handler = if close == open + 1 {
                    // actix: `web::get().to(handler)`.
                    (t.is_punct(close + 1, b'.')
                        && t.is(close + 2, "to")
                        && t.is_punct(close + 3, b'('))
                    .then(|| {
                        t.args(close + 3)
                            .first()
                            .and_then(|&r| self.handler_name(r))
                    })
                    .flatten()
                } else {
                    t.args(open).first().and_then(|&r| self.handler_name(r))
                };
                let method = if m == "any" {
                    "ANY".to_string()
                } else {
                    m.to_ascii_uppercase()
                };
                self.facts.http.push(HttpFact::Route {
                    method,
                    path: path.to_string(),
                    handler,
                    line,
                });
                k = t.skip_group(open);
                continue;
            }
            k = t.skip_group(k);
        }
    }

    /// The handler a route names: the last segment of a path (`handlers::create` → `create`).
    pub(super) fn handler_name(&self, (s, e): (usize, usize)) -> Option<String> {
        let (last, j) = self.t.path_end(s);
        (j == e).then_some(last).flatten().map(str::to_string)
    }

    pub(super) fn prefix(&self, k: usize) -> String {
        let stack = self
            .prefix_stack
            .last()
            .map_or(String::new(), |(_, p)| p.clone());
        // A router built in a variable and nested later (`let api = Router::new().route(…);
        // … .nest("/api", api)`): its routes take the prefix of the nest.
        match self
            .nested_vars
            .iter()
            .rev()
            .find(|((s, e), _)| *s <= k && k < *e)
        {
            Some((_, var)) => join_path(var, &stack),
            None => stack,
        }
    }

    /// Finds the `.nest("/p", name)` calls whose router is a variable, and the right-hand side
    /// of the assignment that built it, before the routes are read.
    pub(super) fn nested_variables(&mut self) {
        let t = self.t;
        for k in 1..t.len() {
            if !(t.is(k, "nest") && t.is_punct(k - 1, b'.') && t.is_punct(k + 1, b'(')) {
                continue;
            }
            let args = t.args(k + 1);
            let [(ps, pe), (vs, ve)] = args[..] else {
                continue;
            };
            let (Some(path), Some(var)) = (self.path_arg((ps, pe)), t.ident(vs)) else {
                continue;
            };
            if ve != vs + 1 || !path.starts_with('/') {
                continue;
            }
            // One entry per router (the last nest names its prefix, as before), and a bound:
            // every route and nest looks the list through, so `.nest("/api", api)` repeated
            // was quadratic.
            if let Some(a) = self.asg.last(var, k) {
                let full = self.nested_vars.len() >= MAX_NESTED_VARS;
                match self.nested_vars.iter_mut().find(|(rhs, _)| *rhs == a.rhs) {
                    Some(entry) => entry.1 = path.into_owned(),
                    None if !full => self.nested_vars.push((a.rhs, path.into_owned())),
                    None => {}
                }
            }
        }
    }

    /// axum `.nest("/api", router)` applies its prefix to the routes inside its second
    /// argument; actix `web::scope("/api")` to the rest of its method chain.
    pub(super) fn prefix_call(&mut self, k: usize, id: &str) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(path) = args.first().and_then(|&arg| self.path_arg(arg)) else {
            return;
        };
        if !path.starts_with('/') {
            return;
        }
        let full = join_path(&self.prefix(k), &path);
        let end = if id == "nest" {
            if !(k > 0 && t.is_punct(k - 1, b'.')) || args.len() != 2 {
                return;
            }
            t.close(k + 1).unwrap_or(t.len())
        } else {
            if !(k >= 2 && t.op2(k - 2, b"::")) {
                return;
            }
            self.chain_end(k + 1)
        };
        self.prefix_stack.push((end, full));
    }

    /// The value of a call argument `(s, e)` that is one string literal (a route path as
    /// written), none for anything else.
    fn path_arg(&self, (s, e): (usize, usize)) -> Option<std::borrow::Cow<'a, str>> {
        (e == s + 1 && self.t.is_str(s))
            .then(|| self.t.str_value(s))
            .flatten()
    }

    /// The last token of the method chain continuing after the group opened at `open`.
    pub(super) fn chain_end(&self, open: usize) -> usize {
        let t = self.t;
        let mut end = t.close(open).unwrap_or(t.len());
        while t.is_punct(end + 1, b'.') && t.ident(end + 2).is_some() && t.is_punct(end + 3, b'(') {
            end = t.close(end + 3).unwrap_or(t.len());
        }
        end
    }

    /// actix `web::resource("/p").route(web::get().to(h)).to(h2)`.
    pub(super) fn resource(&mut self, k: usize) {
        let t = self.t;
        let Some(path) = t.args(k + 1).first().and_then(|&arg| self.path_arg(arg)) else {
            return;
        };
        let full = join_path(&self.prefix(k), &path);
        let line = t.line(k);
        let mut end = t.close(k + 1).unwrap_or(t.len());
        while t.is_punct(end + 1, b'.') && t.is_punct(end + 3, b'(') {
            let Some(m) = t.ident(end + 2) else { break };
            let open = end + 3;
            match m {
                "route" => {
                    if let Some(&r) = t.args(open).first() {
                        self.method_router(r, &full, line);
                    }
                }
                "to" => {
                    let handler = t.args(open).first().and_then(|&r| self.handler_name(r));
                    self.facts.http.push(HttpFact::Route {
                        method: "ANY".to_string(),
                        path: full.clone(),
                        handler,
                        line,
                    });
                }
                _ => {}
            }
            end = t.close(open).unwrap_or(t.len());
        }
    }

    /// reqwest-style calls: `client.get(url)`, `reqwest::get(url)`,
    /// `client.request(Method::POST, url)`.
    pub(super) fn http_call(&mut self, k: usize, id: &str, method_call: bool) {
        let t = self.t;
        let free_fn = k >= 3
            && t.op2(k - 2, b"::")
            && t.ident(k - 3)
                .is_some_and(|c| matches!(c, "reqwest" | "ureq" | "surf" | "isahc"));
        let (method, url, sure) = match id {
            "get" | "post" | "put" | "delete" | "patch" | "head" if method_call || free_fn => {
                let args = t.args(k + 1);
                if args.len() != 1 {
                    return;
                }
                (Some(id.to_ascii_uppercase()), args[0], free_fn)
            }
            "request" if method_call => {
                let args = t.args(k + 1);
                let [(ms, me), url] = args[..] else { return };
                let m = (ms..me)
                    .rev()
                    .find_map(|x| t.ident(x))
                    .map(str::to_ascii_uppercase);
                // `Method::PUT` (or `reqwest::Method::PUT`) says it is HTTP.
                let sure = (ms..me).any(|x| t.kw(x, "Method"));
                (m, url, sure)
            }
            _ => return,
        };
        if let Some(url) = self.url(url, sure) {
            self.facts.http.push(HttpFact::Call {
                method,
                url,
                line: t.line(k),
            });
        }
    }
}
