//! What a name holds (stubs bound by assignment or declared with a stub type) and the pattern
//! pass: gRPC stubs and calls, Kafka topics (cppkafka, librdkafka), HTTP calls (cpr,
//! cpp-httplib, libcurl) and routes (cpp-httplib, Crow).

use super::*;

impl<'a> Cpp<'_, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // Assignments and bindings
    // -----------------------------------------------------------------------------------------

    pub(super) fn body_of(&self, at: usize) -> Option<usize> {
        let p = self.bodies.partition_point(|&(o, _)| o < at);
        let b = p.checked_sub(1)?;
        (at < self.bodies[b].1).then_some(b)
    }

    pub(super) fn bind(&mut self, name: &'a str, svc: &str, at: usize) {
        let scope = match self.body_of(at) {
            Some(b) => Scope::Local(b, at),
            None => Scope::Field,
        };
        // A member assigned inside a method (`stub_ = Svc::NewStub(ch)`) is still a member.
        let scope = if name.ends_with('_') || name.starts_with("m_") {
            Scope::Field
        } else {
            scope
        };
        self.bindings
            .entry(name)
            .or_default()
            .push((svc.to_string(), scope));
    }

    // -----------------------------------------------------------------------------------------
    // gRPC, events, HTTP
    // -----------------------------------------------------------------------------------------

    pub(super) fn patterns(&mut self) {
        let t = self.t;
        for k in 0..t.len() {
            let Some(id) = t.ident(k) else { continue };
            let scoped_by = |k: usize| -> Option<&'a str> {
                (k >= 3 && t.op2(k - 2, b"::"))
                    .then(|| t.ident(k - 3))
                    .flatten()
            };
            let member_call = k > 0
                && (t.is_punct(k - 1, b'.') || (k > 1 && t.op2(k - 2, b"->")))
                && t.is_punct(k + 1, b'(');
            match id {
                "NewStub" if t.is_punct(k + 1, b'(') => {
                    if let Some(svc) = scoped_by(k) {
                        self.new_stub(k, svc);
                    }
                }
                "Stub" | "StubInterface" if !t.is_punct(k + 1, b'(') && !t.op2(k + 1, b"::") => {
                    if let Some(svc) = scoped_by(k) {
                        self.typed_stub(k, svc);
                    }
                }
                "MessageBuilder" => self.message_builder(k),
                "subscribe" if member_call && (self.cppkafka || self.rdkafka) => {
                    let via = if self.cppkafka {
                        "cppkafka"
                    } else {
                        "librdkafka"
                    };
                    if let Some(&r) = t.args(k + 1).first() {
                        for (topic, line) in self.topic_list(r, k) {
                            self.push_event(EventRole::Consumer, topic, via, line);
                        }
                    }
                }
                "create" if t.is_punct(k + 1, b'(') && scoped_by(k) == Some("Topic") => {
                    let args = t.args(k + 1);
                    if let (Some(&(hs, he)), Some(&r)) = (args.first(), args.get(1)) {
                        let consumer = (hs..he)
                            .filter_map(|x| t.ident(x))
                            .any(|h| h.to_ascii_lowercase().contains("consumer"));
                        let role = if consumer {
                            EventRole::Consumer
                        } else {
                            EventRole::Producer
                        };
                        if let Some(topic) = self.topic_expr(r) {
                            self.push_event(role, topic, "librdkafka", t.line(k));
                        }
                    }
                }
                "produce" if member_call && self.rdkafka => {
                    if let Some(&r) = t.args(k + 1).first()
                        && let Some(topic) = self.topic_expr(r)
                    {
                        self.push_event(EventRole::Producer, topic, "librdkafka", t.line(k));
                    }
                }
                "Get" | "Post" | "Put" | "Delete" | "Patch" | "Head" | "Options"
                    if t.is_punct(k + 1, b'(') =>
                {
                    if scoped_by(k) == Some("cpr") {
                        self.cpr_call(k, id);
                    } else if member_call && self.httplib {
                        self.httplib_call(k, id);
                    }
                }
                "CROW_ROUTE" if t.is_punct(k + 1, b'(') => self.crow_route(k),
                "curl_easy_setopt" if t.is_punct(k + 1, b'(') => self.curl_url(k),
                _ => {}
            }
        }
    }

    /// `Svc::NewStub(channel)`, bound to `stub_ = …`, `auto stub = …`, `stub_(…)` in an
    /// initializer list or `std::unique_ptr<Svc::Stub> stub(…)`.
    pub(super) fn new_stub(&mut self, k: usize, svc: &'a str) {
        let t = self.t;
        let mut start = k - 3;
        while start >= 3 && t.op2(start - 2, b"::") && t.ident(start - 3).is_some() {
            start -= 3;
        }
        let mut var = None;
        if start >= 2 && t.is_punct(start - 1, b'=') && !t.is_punct(start - 2, b'=') {
            var = t.ident(start - 2);
        } else if start >= 2
            && (t.is_punct(start - 1, b'(') || t.is_punct(start - 1, b'{'))
            && let Some(v) = t.ident(start - 2)
        {
            // `stub_(…)` in an initializer list or `unique_ptr<…> stub(…)`, not `f(…)`.
            let declares = start.checked_sub(3).is_some_and(|b| {
                matches!(t.punct(b), b':' | b',' | b'>' | b'*' | b'&')
                    || t.ident(b)
                        .is_some_and(|x| !matches!(x, "return" | "co_return"))
            });
            if declares && !NOT_NAMES.contains(&v) && !v.contains("make_") && v != "move" {
                var = Some(v);
            }
        }
        if let Some(v) = var {
            self.bind(v, svc, k);
        }
        self.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: var.map(str::to_string),
            line: t.line(k),
        });
    }

    /// `std::unique_ptr<Svc::Stub> stub_;`, `Svc::StubInterface* stub`.
    pub(super) fn typed_stub(&mut self, k: usize, svc: &'a str) {
        let t = self.t;
        let mut j = k + 1;
        while t.is_punct(j, b'>') || t.is_punct(j, b'*') || t.is_punct(j, b'&') || t.is(j, "const")
        {
            j += 1;
        }
        let Some(name) = t.ident(j) else { return };
        let ends = [b';', b'=', b'(', b'{', b',', b')'];
        if ends.iter().any(|&c| t.is_punct(j + 1, c)) {
            self.bind(name, svc, k);
        }
    }

    pub(super) fn calls(&mut self) {
        let t = self.t;
        if self.bindings.is_empty() {
            return;
        }
        for k in 0..t.len() {
            // The shape first (cheap), the hash lookup last.
            if !t.is_punct(k + 1, b'.') && !t.op2(k + 1, b"->") {
                continue;
            }
            let Some(recv) = t.ident(k) else { continue };
            let Some(list) = self.bindings.get(recv) else {
                continue;
            };
            // `stub_->M(`, `stub.M(`, `stub_->async()->M(`, `stub_.get()->M(`.
            let mut j = k + 1;
            let mut method = None;
            for _ in 0..2 {
                let arrow = if t.op2(j, b"->") {
                    2
                } else if t.is_punct(j, b'.') {
                    1
                } else {
                    break;
                };
                let Some(m) = t.ident(j + arrow) else { break };
                if !t.is_punct(j + arrow + 1, b'(') {
                    break;
                }
                if matches!(m, "async" | "experimental_async" | "get")
                    && t.is_punct(j + arrow + 2, b')')
                {
                    j += arrow + 3;
                    continue;
                }
                method = Some((m, j + arrow));
                break;
            }
            let Some((m, mt)) = method else { continue };
            if !m.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            let body = self.body_of(k);
            let hit = list.iter().rev().take(LOOKBACK).find(|(_, s)| match *s {
                Scope::Field => true,
                Scope::Local(b, from) => body == Some(b) && k > from,
            });
            let Some((svc, _)) = hit else { continue };
            let rpc = m
                .strip_prefix("PrepareAsync")
                .or_else(|| m.strip_prefix("Async"))
                .filter(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
                .unwrap_or(m);
            self.facts
                .push_grpc_call(svc.clone(), recv.to_string(), rpc.to_string(), t.line(mt));
        }
    }

    pub(super) fn push_event(&mut self, role: EventRole, topic: Value, via: &str, line: u32) {
        common::push_event(&mut self.facts, role, topic, via, line);
    }

    /// cppkafka `MessageBuilder("t")` / `MessageBuilder builder(topic);`.
    pub(super) fn message_builder(&mut self, k: usize) {
        let t = self.t;
        let open = if t.is_punct(k + 1, b'(') || t.is_punct(k + 1, b'{') {
            k + 1
        } else if t.ident(k + 1).is_some() && (t.is_punct(k + 2, b'(') || t.is_punct(k + 2, b'{')) {
            k + 2
        } else {
            return;
        };
        if let Some(&r) = t.args(open).first()
            && let Some(topic) = self.topic_expr(r)
        {
            self.push_event(EventRole::Producer, topic, "cppkafka", t.line(k));
        }
    }

    /// The topics of `{"a", "b"}`, `std::vector<std::string>{…}`, or a variable assigned one.
    pub(super) fn topic_list(&self, (s, e): (usize, usize), at: usize) -> Vec<(Value, u32)> {
        let t = self.t;
        let open = (s..e).find(|&x| t.is_punct(x, b'{'));
        if let Some(open) = open
            && t.close(open).is_some_and(|c| c + 1 == e)
        {
            return common::list_topics(t, open, |r| self.topic_expr(r));
        }
        if e == s + 1
            && let Some(name) = t.ident(s)
            && let Some(a) = self.asg.last(name, at)
            && (a.rhs.0..a.rhs.1).any(|x| t.is_punct(x, b'{'))
        {
            return self.topic_list(a.rhs, a.at).into_iter().collect();
        }
        self.topic_expr((s, e))
            .map(|x| vec![(x, t.line(s))])
            .unwrap_or_default()
    }

    /// A topic argument: a literal that looks like a topic name, or whatever the evaluator
    /// reads (`getenv("T")`, a constant or macro left to the graph — `topics::kOrders` gives
    /// `topics.kOrders` — a local traced to its value, or a run-time value, kept so the graph
    /// lists the site as unresolved).
    pub(super) fn topic_expr(&self, r: (usize, usize)) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        common::topic_of(self.value((s, e)))
    }

    /// cpr: `cpr::Get(cpr::Url{"http://orders/x"}, …)`.
    pub(super) fn cpr_call(&mut self, k: usize, id: &str) {
        let t = self.t;
        let args = t.args(k + 1);
        let url = args
            .iter()
            .find(|&&(a, b)| (a..b).any(|x| t.is(x, "Url")))
            .or(args.first());
        if let Some(&r) = url
            && let Some(url) = self.url(r, true)
        {
            self.facts.http.push(HttpFact::Call {
                method: Some(id.to_ascii_uppercase()),
                url,
                line: t.line(k),
            });
        }
    }

    /// cpp-httplib: `svr.Get("/x", handler)` is a route, `cli.Get("/x")` a call.
    pub(super) fn httplib_call(&mut self, k: usize, id: &str) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(&(ps, pe)) = args.first() else {
            return;
        };
        let handler_arg = args.get(1).filter(|&&(a, b)| {
            args.len() == 2 && (t.is_punct(a, b'[') || (b == a + 1 && t.ident(a).is_some()))
        });
        if let Some(&(a, b)) = handler_arg {
            if pe == ps + 1
                && t.is_str(ps)
                && let Some(path) = t.str_value(ps).filter(|p| p.starts_with('/'))
            {
                let handler = (b == a + 1).then(|| t.text(a).to_string());
                self.facts.http.push(HttpFact::Route {
                    method: id.to_ascii_uppercase(),
                    path: path.into_owned(),
                    handler,
                    line: t.line(k),
                });
            }
            return;
        }
        // Any object may have a `Get`: the argument must read like a URL.
        if let Some(url) = self.url((ps, pe), false) {
            self.facts.http.push(HttpFact::Call {
                method: Some(id.to_ascii_uppercase()),
                url,
                line: t.line(k),
            });
        }
    }

    /// Crow: `CROW_ROUTE(app, "/orders/<int>").methods("POST"_method)(handler)`.
    pub(super) fn crow_route(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(&(ps, pe)) = args.get(1) else { return };
        if pe != ps + 1 || !t.is_str(ps) {
            return;
        }
        let Some(path) = t.str_value(ps) else { return };
        let mut methods = Vec::new();
        if let Some(c) = t.close(k + 1)
            && t.is_punct(c + 1, b'.')
            && t.is(c + 2, "methods")
            && t.is_punct(c + 3, b'(')
        {
            let end = t.close(c + 3).unwrap_or(t.len());
            for x in c + 4..end {
                if t.is_str(x)
                    && let Some(m) = t.str_value(x)
                {
                    methods.push(m.to_ascii_uppercase());
                } else if t.op2(x.saturating_sub(2), b"::")
                    && t.is(x.saturating_sub(3), "HTTPMethod")
                    && let Some(m) = t.ident(x)
                {
                    methods.push(m.to_ascii_uppercase());
                }
            }
        }
        if methods.is_empty() {
            methods.push("ANY".to_string());
        }
        for method in methods {
            self.facts.http.push(HttpFact::Route {
                method,
                path: path.to_string(),
                handler: None,
                line: t.line(k),
            });
        }
    }

    /// libcurl: `curl_easy_setopt(h, CURLOPT_URL, url)`.
    pub(super) fn curl_url(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        if let [_, (os, oe), r] = args[..]
            && oe == os + 1
            && t.kw(os, "CURLOPT_URL")
            && let Some(url) = self.url(r, true)
        {
            self.facts.http.push(HttpFact::Call {
                method: None,
                url,
                line: t.line(k),
            });
        }
    }

    /// The URL argument of an HTTP call. `sure` when the call is HTTP whatever its argument
    /// (cpr, libcurl); otherwise it must read like a URL, so `cache.Get(key)` is no request.
    pub(super) fn url(&self, r: (usize, usize), sure: bool) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        common::url_of(self.value((s, e)), sure)
    }
}
