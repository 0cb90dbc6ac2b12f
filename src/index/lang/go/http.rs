//! HTTP: routes (net/http with Go 1.22 method patterns, gorilla/mux, gin, echo, chi, fiber,
//! groups and prefixes) and client calls (`http.Get`, `http.NewRequest`, clients, resty).

use super::*;

impl<'t, 'a> Go<'t, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // HTTP
    // -----------------------------------------------------------------------------------------

    /// Routes (`HandleFunc`, gin/echo `GET`, chi `Get`/`Route`/`Method`, groups) and client
    /// calls (`http.Get`, `http.NewRequest`, `client.Post`, resty `R().Get`).
    pub(super) fn http(&mut self, k: usize, id: &str) {
        let t = self.t;
        if k == 0 || !t.is_punct(k - 1, b'.') {
            return;
        }
        let interesting = matches!(
            id,
            "HandleFunc"
                | "Handle"
                | "PostForm"
                | "NewRequest"
                | "NewRequestWithContext"
                | "Method"
                | "MethodFunc"
                | "Route"
                | "Group"
                | "PathPrefix"
                | "Handler"
                | "HandlerFunc"
        ) || GIN_METHODS.contains(&id)
            || CHI_METHODS.contains(&id);
        if !interesting {
            return;
        }
        let recv = k.checked_sub(2).and_then(|r| t.ident(r));
        let args = t.args(k + 1);
        let line = t.line(k);
        while self.route_stack.last().is_some_and(|&(c, _)| c < k) {
            self.route_stack.pop();
        }
        let path_arg = |r: (usize, usize)| -> Option<String> {
            self.route_text(r)
                .filter(|p| p.is_empty() || p.starts_with('/'))
        };
        match id {
            "HandleFunc" | "Handle" if args.len() >= 2 => {
                let Some(pattern) = self.route_text(args[0]) else {
                    return;
                };
                let (method, path) = match pattern.split_once(' ') {
                    Some((m, p)) if HTTP_METHODS.contains(&m) => (m.to_string(), p.trim()),
                    _ => ("ANY".to_string(), pattern.as_str()),
                };
                // A host in the pattern (`example.com/x`) is not part of the path.
                let path = match path.find('/') {
                    Some(i) => &path[i..],
                    None => return,
                };
                let path = &served_pattern(recv, path);
                // gorilla/mux: `.HandleFunc(…).Methods("GET", "HEAD")`, one route per method.
                let mut methods: Vec<String> = Vec::new();
                if let Some(c) = t.close(k + 1)
                    && t.is_punct(c + 1, b'.')
                    && t.is(c + 2, "Methods")
                    && t.is_punct(c + 3, b'(')
                {
                    methods = t
                        .args(c + 3)
                        .into_iter()
                        .filter_map(|m| self.method_arg(m))
                        .collect();
                    dedup_in_order(&mut methods);
                }
                if methods.is_empty() {
                    methods.push(method);
                }
                let handler = self.handler_name(args[1]);
                for method in &methods {
                    self.route(recv, method, path, handler.clone(), line);
                }
            }
            _ if GIN_METHODS.contains(&id) && args.len() >= 2 => {
                if let Some(path) = path_arg(args[0]) {
                    let method = if id == "Any" { "ANY" } else { id };
                    let handler = self.handler_name(args[args.len() - 1]);
                    self.route(recv, method, &path, handler, line);
                }
            }
            _ if CHI_METHODS.contains(&id) => {
                let method = id.to_ascii_uppercase();
                // A handler is a name, a selector, a function literal or a wrapper call.
                let route_path =
                    (recv != Some("http") && args.len() == 2 && t.ident(args[1].0).is_some())
                        .then(|| path_arg(args[0]))
                        .flatten();
                if let Some(path) = route_path {
                    let handler = self.handler_name(args[1]);
                    self.route(recv, &method, &path, handler, line);
                } else if matches!(id, "Get" | "Post" | "Put" | "Delete" | "Patch" | "Head")
                    // net/http and resty take the URL alone; `Post(url, contentType, body)`.
                    && (args.len() == 1 || (id == "Post" && args.len() == 3))
                    && let Some(&url) = args.first()
                {
                    // `http.Get`, `http.DefaultClient.Get` and resty's `R().Get` are requests
                    // whatever the URL; any other receiver needs a URL-looking argument.
                    let sure = matches!(recv, Some("http" | "DefaultClient")) || self.resty(k);
                    self.http_call(Some(method), url, k, sure);
                }
            }
            "PostForm" if recv == Some("http") || args.len() == 2 => {
                if let Some(&url) = args.first() {
                    let sure = recv == Some("http");
                    self.http_call(Some("POST".to_string()), url, k, sure);
                }
            }
            "NewRequest" | "NewRequestWithContext" => {
                // The request is sent later (`client.Do(req)`); the site is where it is built,
                // with its method and URL.
                let skip = usize::from(id == "NewRequestWithContext");
                let (Some(&m), Some(&url)) = (args.get(skip), args.get(skip + 1)) else {
                    return;
                };
                let method = self.method_arg(m);
                let sure = recv == Some("http") || method.is_some();
                self.http_call(method, url, k, sure);
            }
            "Method" | "MethodFunc" if args.len() == 3 => {
                if let (Some(m), Some(path)) = (self.route_text(args[0]), path_arg(args[1])) {
                    let handler = self.handler_name(args[2]);
                    self.route(recv, &m.to_ascii_uppercase(), &path, handler, line);
                }
            }
            // gorilla/mux matchers before the handler (go-kit's transport style):
            // `r.Methods("GET").Path("/catalogue/{id}").Handler(h)`.
            "Handler" | "HandlerFunc" if args.len() == 1 => self.mux_chain_route(k, args[0]),
            "Route" if args.len() == 2 => {
                if let Some(path) = path_arg(args[0]) {
                    let full = join_path(&self.prefix_for(recv), &path);
                    let close = t.close(k + 1).unwrap_or(t.len());
                    self.route_stack.push((close, full));
                }
            }
            "Group" | "PathPrefix" if !args.is_empty() => {
                if let Some(path) = path_arg(args[0])
                    && let Some(a) = self.asg.starting_at(chain_start(t, k))
                {
                    let full = join_path(&self.prefix_for(recv), &path);
                    self.group_prefix.insert(t.text(a.at), full);
                }
            }
            _ => {}
        }
    }

    /// A gorilla/mux route whose matchers precede its handler: walks the chain back from
    /// `.Handler(h)` at `k` through `Methods`, `Path`, `PathPrefix` and the matchers that do
    /// not change the path, to the router it starts on. Any other call in the chain (a
    /// `Subrouter()`, a builder of something else) means it is no route.
    fn mux_chain_route(&mut self, k: usize, handler: (usize, usize)) {
        let t = self.t;
        let mut methods: Vec<String> = Vec::new();
        let mut path: Option<(String, u32)> = None;
        let mut dot = k - 1;
        let recv = loop {
            let Some(prev) = dot.checked_sub(1) else {
                return;
            };
            if let Some(id) = t.ident(prev) {
                break (prev == 0 || !t.is_punct(prev - 1, b'.')).then_some(id);
            }
            let Some(open) = t.is_punct(prev, b')').then(|| t.open_of(prev)).flatten() else {
                return;
            };
            let Some(name) = open.checked_sub(1).and_then(|n| t.ident(n)) else {
                return;
            };
            let args = t.args(open);
            match name {
                "Methods" => methods.extend(args.into_iter().filter_map(|m| self.method_arg(m))),
                "Path" | "PathPrefix" if path.is_none() => {
                    path = args
                        .first()
                        .and_then(|&a| Some((self.route_text(a)?, t.line(a.0))));
                }
                "Name" | "Schemes" | "Headers" | "HeadersRegexp" | "Queries" | "Host"
                | "MatcherFunc" => {}
                _ => return,
            }
            // A chain that opens the file (`Path("/x").Handler(h)`) has no receiver.
            match open.checked_sub(2) {
                Some(d) if t.is_punct(d, b'.') => dot = d,
                _ => return,
            }
        };
        let Some((path, line)) = path.filter(|(p, _)| p.starts_with('/')) else {
            return;
        };
        dedup_in_order(&mut methods);
        if methods.is_empty() {
            methods.push("ANY".to_string());
        }
        // go-kit wraps the endpoint first: `httptransport.NewServer(e.ListEndpoint, dec, enc)`.
        let (hs, he) = handler;
        let open = (hs..he).find(|&i| t.is_punct(i, b'('));
        let handler = match open {
            Some(o) if o > hs && t.is(o - 1, "NewServer") && t.close(o) == Some(he - 1) => {
                t.args(o).first().copied().unwrap_or(handler)
            }
            _ => handler,
        };
        let name = self.handler_name(handler);
        for method in &methods {
            self.route(recv, method, &path, name.clone(), line);
        }
    }

    /// True when the call at `k` is a method of a resty request (`client.R().Get(…)`,
    /// `resty.New().R().SetBody(b).Post(…)`).
    pub(super) fn resty(&self, k: usize) -> bool {
        let t = self.t;
        let mut j = k.saturating_sub(2);
        for _ in 0..8 {
            let Some(open) = t.is_punct(j, b')').then(|| t.open_of(j)).flatten() else {
                return false;
            };
            if open == 0 {
                return false;
            }
            if t.is(open - 1, "R") && t.is_punct(open - 2, b'.') {
                return true;
            }
            if !t.is_punct(open.wrapping_sub(2), b'.') {
                return false;
            }
            j = open.saturating_sub(3);
        }
        false
    }

    /// An HTTP method argument: `"GET"` or `http.MethodGet`.
    pub(super) fn method_arg(&self, (s, e): (usize, usize)) -> Option<String> {
        let t = self.t;
        let m = if e == s + 1 && t.is_str(s) {
            t.str_value(s)?.to_ascii_uppercase()
        } else if e == s + 3 && t.is(s, "http") {
            t.ident(s + 2)?.strip_prefix("Method")?.to_ascii_uppercase()
        } else {
            return None;
        };
        HTTP_METHODS.contains(&m.as_str()).then_some(m)
    }

    /// The prefix in force for routes on `recv`: the innermost chi `Route` scope, then the
    /// receiver's group prefix.
    pub(super) fn prefix_for(&self, recv: Option<&str>) -> String {
        let outer = self
            .route_stack
            .last()
            .map_or(String::new(), |(_, p)| p.clone());
        let group = recv
            .and_then(|r| self.group_prefix.get(r))
            .map_or("", String::as_str);
        if group.is_empty() {
            outer
        } else {
            join_path(&outer, group)
        }
    }

    pub(super) fn route(
        &mut self,
        recv: Option<&str>,
        method: &str,
        path: &str,
        handler: Option<String>,
        line: u32,
    ) {
        let prefix = self.prefix_for(recv);
        let full = join_path(&prefix, path);
        if full.is_empty() {
            return;
        }
        self.facts.http.push(HttpFact::Route {
            method: method.to_string(),
            path: full,
            handler,
            line,
        });
    }

    /// The function a handler argument names: `h`, `s.createOrder`, `http.HandlerFunc(h)`,
    /// `mw(h)`; `None` for a function literal.
    pub(super) fn handler_name(&self, (mut s, mut e): (usize, usize)) -> Option<String> {
        let t = self.t;
        for _ in 0..4 {
            if s >= e || t.is(s, "func") {
                return None;
            }
            let mut j = s;
            while j < e && (t.ident(j).is_some() || t.is_punct(j, b'.')) {
                j += 1;
            }
            if j == e {
                return t.ident(e - 1).map(str::to_string);
            }
            // A wrapper call: look at its last argument.
            if t.is_punct(j, b'(') && t.close(j) == Some(e - 1) {
                let &(a, b) = t.args(j).last()?;
                s = a;
                e = b;
                continue;
            }
            return None;
        }
        None
    }

    pub(super) fn http_call(
        &mut self,
        method: Option<String>,
        url: (usize, usize),
        k: usize,
        sure: bool,
    ) {
        if let Some(url) = self.url(url, sure) {
            self.facts.http.push(HttpFact::Call {
                method,
                url,
                line: self.t.line(k),
            });
        }
    }
}

/// Drops repeated methods, keeping the first of each (`Methods("GET", "POST", "GET")`).
fn dedup_in_order(methods: &mut Vec<String>) {
    let mut seen: Vec<String> = Vec::with_capacity(methods.len());
    methods.retain(|m| {
        let new = !seen.contains(m);
        if new {
            seen.push(m.clone());
        }
        new
    });
}

/// The path a `HandleFunc` pattern serves: net/http's ServeMux serves the whole subtree of a
/// pattern ending in `/` (`http.HandleFunc("/catalogue/", h)` answers `/catalogue/42`), which
/// Go 1.22 writes `/catalogue/{path...}`; gorilla and the other routers match it exactly.
fn served_pattern(recv: Option<&str>, path: &str) -> String {
    if recv == Some("http") && path.len() > 1 && path.ends_with('/') {
        format!("{path}{{path...}}")
    } else {
        path.to_string()
    }
}
