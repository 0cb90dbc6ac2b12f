//! Pass 3, uses: the calls of the file — gRPC client calls, Kafka produce and subscribe,
//! typed event buses, minimal-API routes, `HttpClient` requests and Blazor's `NavigateTo`.

use super::events::typed_bus_role;
use super::*;

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn uses(&mut self) {
        let t = self.t;
        let mut poll = Every::new();
        for p in 0..t.len() {
            if poll.stop() {
                return;
            }
            let open = t.punct(p);
            if open != b'(' && open != b'{' {
                continue;
            }
            if p >= 2 && t.is(p - 1, "HttpRequestMessage") && t.is(p - 2, "new") {
                self.request_message(p);
                continue;
            }
            if open != b'(' {
                continue;
            }
            if let Some(c) = t.callee(p) {
                self.call(&c, p);
            }
        }
    }

    fn call(&mut self, c: &Chain<'t>, p: usize) {
        let t = self.t;
        let last = c.last();
        let recv = c.receiver();
        let bound = recv.and_then(|r| self.bind.get(r)).cloned();
        // `GetBasketClient().GetBasketAsync(…)`, `new Svc.SvcClient(ch).GetAsync(…)`: the
        // receiver is the call or construction before the dot.
        if c.after_call
            && c.len == 1
            && !CLIENT_PLUMBING.contains(&last)
            && let Some(svc) = self.client_of_call_before(c.start)
        {
            let line = self.line(p);
            self.facts
                .push_grpc_call(svc, String::new(), strip_async(last).to_string(), line);
            return;
        }
        if self.aws_messaging(last, recv, p) {
            return;
        }
        if let Some(r) = recv
            && self.pubsub_call(last, r, p)
        {
            return;
        }
        if let Some(role) = typed_bus_role(last, recv)
            && self.typed_bus(role, c, p)
        {
            return;
        }
        if let Some(r) = recv {
            match &bound {
                // Every client method takes a request: a call without arguments
                // (`resp.GetOffers()` on a response message) is a getter, never an RPC.
                Some(Bind::Grpc(svc))
                    if !CLIENT_PLUMBING.contains(&last) && t.close(p) != Some(p + 1) =>
                {
                    let line = self.line(p);
                    self.facts.push_grpc_call(
                        svc.clone(),
                        r.to_string(),
                        strip_async(last).to_string(),
                        line,
                    );
                    return;
                }
                _ => {}
            }
            let lower = r.to_ascii_lowercase();
            if matches!(last, "ProduceAsync" | "Produce")
                && (bound == Some(Bind::Producer) || lower.contains("producer"))
            {
                if let Some(&(a, e)) = t.args(p).first()
                    && let Some(topic) = self.topic_expr(a, e)
                {
                    self.event(EventRole::Producer, topic, p);
                }
                return;
            }
            if last == "Subscribe" && (bound == Some(Bind::Consumer) || lower.contains("consumer"))
            {
                if let Some(&(a, e)) = t.args(p).first() {
                    self.subscribe_topics(a, e, p);
                }
                return;
            }
        }
        // `Nav.NavigateTo("user/orders")`, `NavigationManager.NavigateTo($"item/{id}")`: a
        // Blazor app navigating to a page of its own.
        if last == "NavigateTo" && recv.is_some() && !c.after_call {
            if let Some(&(a, e)) = t.args(p).first() {
                let a = if t.ident(a).is_some() && t.punct(a + 1) == b':' {
                    a + 2
                } else {
                    a
                };
                // `NavigateTo(absolute ? "/" : returnUrl)` goes to either branch.
                let line = self.line(p);
                for (a, e) in conditional_branches(t, a, e) {
                    let mut url = eval(t, (a, e), &ExprRules::CSHARP, self.asg);
                    // `NavigateTo(Pages.LogIn.Url(Nav))`: what the method returns, when its
                    // class's file says (a `LogIn.Url()` binding, see `method_returns`).
                    if url.is_dynamic()
                        && let Some(name) = method_call_name(t, a, e)
                    {
                        url = Value::reference(name);
                    }
                    if a < e && (url.parts.is_empty() || !url.is_dynamic()) {
                        self.facts.http.push(HttpFact::Navigate { url, line });
                    }
                }
            }
            return;
        }
        if let Some(&(_, verb)) = HTTP_METHODS.iter().find(|(m, _)| *m == last)
            && !c.after_call
            && recv.is_some()
        {
            if verb.is_empty() {
                return;
            }
            let sure = matches!(bound, Some(Bind::Http))
                || recv.is_some_and(|r| r.to_ascii_lowercase().contains("http"));
            if let Some(&(a, e)) = t.args(p).first()
                && let Some(url) = self.url_in(a, e, sure)
            {
                let line = self.line(p);
                self.facts.http.push(HttpFact::Call {
                    method: Some(verb.to_string()),
                    url,
                    line,
                });
            }
            return;
        }
        let route_verb = match last {
            "MapGet" => "GET",
            "MapPost" => "POST",
            "MapPut" => "PUT",
            "MapDelete" => "DELETE",
            "MapPatch" => "PATCH",
            // Health endpoints, reverse-proxy forwards and explicit verb lists.
            "MapHealthChecks" | "MapForwarder" | "Map" | "MapFallback" => "ANY",
            "MapMethods" => {
                let verbs = t
                    .args(p)
                    .get(1)
                    .map(|&(a, b)| {
                        (a..b)
                            .filter_map(|k| t.ident(k))
                            .filter(|w| !matches!(*w, "HttpMethods" | "new" | "string"))
                            .map(str::to_ascii_uppercase)
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
                match verbs.as_slice() {
                    [one] => match one.as_str() {
                        "GET" | "POST" | "PUT" | "DELETE" | "PATCH" | "HEAD" | "OPTIONS" => {
                            return self.route_call(c, p, bound.as_ref(), leak(one));
                        }
                        _ => "ANY",
                    },
                    _ => "ANY",
                }
            }
            _ => return,
        };
        self.route_call(c, p, bound.as_ref(), route_verb);
    }

    /// A minimal-API route registration at the call whose `(` is `p`.
    fn route_call(&mut self, c: &Chain<'t>, p: usize, bound: Option<&Bind>, route_verb: &str) {
        let t = self.t;
        // `MapForwarder("/images/{id}", "https+http://catalog-api", "/api/items/{id}/pic")`
        // serves a route and calls the target.
        if c.last() == "MapForwarder"
            && let [_, (ha, hb), (pa, pb), ..] = t.args(p).as_slice()
        {
            let mut url = eval(t, (*ha, *hb), &ExprRules::CSHARP, self.asg);
            url.extend(eval(t, (*pa, *pb), &ExprRules::CSHARP, self.asg));
            let line = self.line(p);
            self.facts.http.push(HttpFact::Call {
                method: None,
                url,
                line,
            });
        }
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        let Some(path) = t
            .str_value(a)
            .filter(|_| e == a + 1 && !self.interpolated(a))
        else {
            return;
        };
        let (prefix, group_versions) = match bound {
            Some(Bind::Group(g, vs)) => (g.as_str(), vs.as_slice()),
            _ => ("", &[][..]),
        };
        let handler = args.get(1).and_then(|&(x, y)| {
            let mut name = None;
            for k in x..y {
                if let Some(id) = t.ident(k) {
                    name = Some(id);
                } else if t.punct(k) != b'.' {
                    return None;
                }
            }
            name.map(str::to_string)
        });
        let line = self.line(p);
        // The versions it serves: its own `.HasApiVersion(…)`, else its group's, narrowed
        // to `.MapToApiVersion(…)`; none when it is version-neutral.
        let chained = t
            .close(p)
            .map(|close| chained_versions(t, close))
            .unwrap_or_default();
        let mut versions = if chained.declared.is_empty() {
            group_versions.to_vec()
        } else {
            chained.declared
        };
        if !chained.mapped.is_empty() {
            versions = chained.mapped;
        }
        if !versions.is_empty() && !chained.neutral {
            self.facts.http.push(HttpFact::Versions { versions, line });
        }
        self.facts.http.push(HttpFact::Route {
            method: route_verb.to_string(),
            path: if prefix.is_empty() {
                path.into_owned()
            } else {
                join_route(prefix, &path)
            },
            handler,
            line,
        });
    }

    fn event(&mut self, role: EventRole, topic: Value, p: usize) {
        let line = self.line(p);
        self.facts.events.push(EventFact {
            role,
            topic,
            via: "Confluent.Kafka".to_string(),
            line,
        });
    }

    /// `Subscribe("t")`, `Subscribe(new[] { "a", B })`, `Subscribe(new List<string> { … })`.
    fn subscribe_topics(&mut self, a: usize, e: usize, p: usize) {
        let t = self.t;
        if t.is(a, "new") {
            let Some(open) = (a..e).find(|&k| t.punct(k) == b'{') else {
                return;
            };
            for (x, y) in t.args(open) {
                if let Some(topic) = self.topic_expr(x, y) {
                    self.event(EventRole::Consumer, topic, p);
                }
            }
            return;
        }
        if let Some(topic) = self.topic_expr(a, e) {
            self.event(EventRole::Consumer, topic, p);
        }
    }

    /// `new HttpRequestMessage(HttpMethod.Post, "/x")`, or its object initializer
    /// `new HttpRequestMessage() { RequestUri = new Uri(url), Method = HttpMethod.Post }`
    /// (`p` is the `(` or the `{` after the type).
    fn request_message(&mut self, p: usize) {
        let t = self.t;
        let verb_of = |(a, e): (usize, usize)| {
            (e == a + 3 && t.is(a, "HttpMethod")).then(|| t.text(a + 2).to_ascii_uppercase())
        };
        let (mut method, mut uri) = (None, None);
        let mut end = p;
        if t.punct(p) == b'(' {
            let args = t.args(p);
            if let (Some(&m), Some(&u)) = (args.first(), args.get(1)) {
                (method, uri) = (verb_of(m), Some(u));
            }
            end = t.close(p).unwrap_or(p);
        }
        // The initializer's `RequestUri = …` and `Method = HttpMethod.X`.
        if t.is_punct(end + 1, b'{') || (end == p && t.punct(p) == b'{') {
            let open = if end == p && t.punct(p) == b'{' {
                p
            } else {
                end + 1
            };
            for (a, e) in t.args(open) {
                if !t.is_punct(a + 1, b'=') || a + 2 >= e {
                    continue;
                }
                if t.is(a, "Method") {
                    method = verb_of((a + 2, e)).or(method);
                } else if t.is(a, "RequestUri") {
                    uri = Some(uri_argument(t, (a + 2, e)));
                }
            }
        }
        let Some((ua, ue)) = uri else {
            return;
        };
        if let Some(url) = self.url_in(ua, ue, true) {
            // The site is where the message is sent (`SendAsync(requestMessage)`), when the
            // file sends it; else where it is built.
            let sent = self
                .asg
                .holding(p)
                .and_then(|a| Assignments::sent_at(t, a, &["SendAsync", "Send"]));
            let line = self.line(sent.unwrap_or(p));
            self.facts.http.push(HttpFact::Call { method, url, line });
        }
    }
}

/// The API versions a fluent chain after a route or group (from its closing `)` at `close`)
/// declares: `.HasApiVersion(1.0)`, `.MapToApiVersion(2, 0)`, `.IsApiVersionNeutral()`.
#[derive(Debug, Default, PartialEq)]
pub(super) struct ChainedVersions {
    pub declared: Vec<String>,
    pub mapped: Vec<String>,
    pub neutral: bool,
}

/// Reads the chain `.A(…).B(…)…` after `close` for [`ChainedVersions`].
pub(super) fn chained_versions(t: &Tokens, close: usize) -> ChainedVersions {
    let mut out = ChainedVersions::default();
    let mut k = close + 1;
    // A route's chain is short; a runaway one (a long builder) stops here.
    for _ in 0..32 {
        if !t.is_punct(k, b'.') || !t.is_punct(k + 2, b'(') {
            break;
        }
        let Some(name) = t.ident(k + 1) else { break };
        let open = k + 2;
        match name {
            "HasApiVersion" | "HasDeprecatedApiVersion" => {
                out.declared.extend(version_arg(t, open));
            }
            "MapToApiVersion" => out.mapped.extend(version_arg(t, open)),
            "IsApiVersionNeutral" => out.neutral = true,
            _ => {}
        }
        let Some(end) = t.close(open) else { break };
        k = end + 1;
    }
    for list in [&mut out.declared, &mut out.mapped] {
        let mut seen = std::collections::HashSet::new();
        list.retain(|v| seen.insert(v.clone()));
    }
    out
}

/// The version in the arguments of `HasApiVersion(…)` whose `(` is `open`: `1.0`, `1, 0`,
/// `"2.0"`, `2`, `new ApiVersion(1, 0)`, `1.0, "beta"` (→ `1.0-beta`).
fn version_arg(t: &Tokens, open: usize) -> Option<String> {
    let mut args = t.args(open);
    if let [(a, _)] = args.as_slice()
        && t.kw(*a, "new")
        && t.is(a + 1, "ApiVersion")
        && t.is_punct(a + 2, b'(')
    {
        args = t.args(a + 2);
    }
    let one = |(a, e): (usize, usize)| -> Option<(String, bool)> {
        if e != a + 1 {
            return None;
        }
        match t.kind(a)? {
            TokKind::Num => Some((t.text(a).to_string(), true)),
            TokKind::Str => Some((t.str_value(a)?.into_owned(), false)),
            _ => None,
        }
    };
    let v = match args.as_slice() {
        [x] => one(*x)?.0,
        [x, y] => match (one(*x)?, one(*y)?) {
            ((major, true), (minor, true)) if !major.contains('.') => format!("{major}.{minor}"),
            ((v, _), (status, false)) => {
                format!("{}-{status}", crate::index::graph::api_version(&v)?)
            }
            _ => return None,
        },
        _ => return None,
    };
    crate::index::graph::api_version(&v)
}

/// The URL inside `new Uri(url, UriKind.Absolute)` (its first argument), else the
/// expression `(a, e)` itself.
fn uri_argument(t: &Tokens, (a, e): (usize, usize)) -> (usize, usize) {
    if t.kw(a, "new")
        && t.is(a + 1, "Uri")
        && t.is_punct(a + 2, b'(')
        && let Some(&first) = t.args(a + 2).first()
    {
        return first;
    }
    (a, e)
}

/// The static name of an HTTP verb (the route verbs are a closed set).
fn leak(verb: &str) -> &'static str {
    match verb {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        _ => "ANY",
    }
}

/// The two branches of a conditional expression `c ? x : y` spanning `a..e` (nested ones
/// split further), or the expression itself.
fn conditional_branches(t: &Tokens, a: usize, e: usize) -> Vec<(usize, usize)> {
    if e > a + 1 && t.punct(a) == b'(' && t.skip_group(a) == e {
        return conditional_branches(t, a + 1, e - 1);
    }
    let (mut question, mut k, mut depth) = (None, a, 0usize);
    while k < e {
        match t.punct(k) {
            b'(' | b'[' | b'{' => {
                k = t.skip_group(k);
                continue;
            }
            b'?' if question.is_none() => question = Some(k),
            b'?' => depth += 1,
            b':' if question.is_some() && depth > 0 => depth -= 1,
            b':' if let Some(q) = question => {
                let mut out = conditional_branches(t, q + 1, k);
                out.extend(conditional_branches(t, k + 1, e));
                return out;
            }
            _ => {}
        }
        k += 1;
    }
    vec![(a, e)]
}

/// `Class.Method()` for an expression `a..e` that is one call of a qualified method
/// (`Pages.User.LogIn.Url(Nav)` gives `LogIn.Url()`): the name a [`Ex::method_returns`]
/// binding of the class's file has.
fn method_call_name(t: &Tokens, a: usize, e: usize) -> Option<String> {
    let close = e.checked_sub(1)?;
    let open = t.open_of(close)?;
    let c = t.callee(open)?;
    (t.is_punct(open, b'(') && c.start == a && c.len >= 2 && !c.after_call)
        .then(|| method_ref(c.segs[c.len - 2], c.last()))
}

/// The binding name of what `class.method(…)` returns.
pub(super) fn method_ref(class: &str, method: &str) -> String {
    format!("{class}.{method}()")
}
