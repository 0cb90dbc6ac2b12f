//! What a name holds (tonic clients bound by `let` or a field) and the pattern pass: tonic
//! servers, clients and calls, rdkafka producers and consumers, and the topics and URLs read by
//! the shared evaluator.

use super::*;

impl<'t, 'a> Rs<'t, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // Bindings
    // -----------------------------------------------------------------------------------------

    pub(super) fn enclosing_func(&self, at: usize) -> Option<usize> {
        common::enclosing(&self.funcs, at, |f| {
            (f.start, f.body.or(f.params).map(|(_, c)| c))
        })
    }

    pub(super) fn bind(&mut self, name: &'a str, service: &str, scope: Scope) {
        common::bind_client(&mut self.bindings, name, service, scope);
    }

    // -----------------------------------------------------------------------------------------
    // Servers, clients, events, routes
    // -----------------------------------------------------------------------------------------

    pub(super) fn patterns(&mut self) {
        let t = self.t;
        self.nested_variables();
        for k in 0..t.len() {
            while self.prefix_stack.last().is_some_and(|&(end, _)| end < k) {
                self.prefix_stack.pop();
            }
            let Some(id) = t.ident(k) else { continue };
            let path_call = t.op2(k + 1, b"::");
            if path_call {
                if let Some(svc) = id.strip_suffix("Server").filter(|s| !s.is_empty()) {
                    self.server_new(k, id, svc);
                } else if let Some(svc) = id.strip_suffix("Client").filter(|s| !s.is_empty()) {
                    self.client_new(k, id, svc);
                }
                if matches!(id, "FutureRecord" | "BaseRecord") {
                    self.record_to(k);
                }
            }
            if let Some(svc) = id.strip_suffix("Client").filter(|s| !s.is_empty())
                && !path_call
            {
                self.typed_client(k, id, svc);
            }
            if t.is_punct(k + 1, b'(') {
                let method_call = k > 0 && t.is_punct(k - 1, b'.');
                match id {
                    "subscribe" if method_call && self.rdkafka => self.subscribe(k),
                    "route" if method_call => self.route_call(k),
                    "nest" | "scope" => self.prefix_call(k, id),
                    "resource" if k >= 2 && t.op2(k - 2, b"::") => self.resource(k),
                    _ => {}
                }
                if self.http_client {
                    self.http_call(k, id, method_call);
                }
            }
        }
    }

    /// True when a generated tonic type is recognisable here: path-qualified with the
    /// generated module (`orders_client::OrdersClient`), imported from it, or the file uses
    /// tonic.
    pub(super) fn tonic_type(
        &self,
        k: usize,
        id: &str,
        module_suffix: &str,
        imported: bool,
    ) -> bool {
        let t = self.t;
        let qualified = k >= 3
            && t.op2(k - 2, b"::")
            && t.ident(k - 3).is_some_and(|m| m.ends_with(module_suffix));
        qualified || imported || (self.tonic && id.len() > 6)
    }

    /// `OrdersServer::new(impl)` (also `with_interceptor`, `from_arc`): a server registration.
    pub(super) fn server_new(&mut self, k: usize, id: &str, svc: &str) {
        let t = self.t;
        let Some(ctor) = t.ident(k + 3) else { return };
        if !matches!(
            ctor,
            "new" | "with_interceptor" | "from_arc" | "from_shared"
        ) || !t.is_punct(k + 4, b'(')
        {
            return;
        }
        let start = path_start(t, k);
        let in_add_service =
            start >= 2 && t.is(start - 2, "add_service") && t.is_punct(start - 1, b'(');
        let qualified =
            k >= 3 && t.op2(k - 2, b"::") && t.ident(k - 3).is_some_and(|m| m.ends_with("_server"));
        if !(in_add_service || qualified || self.server_names.contains(id)) {
            return;
        }
        let impl_type = t
            .args(k + 4)
            .first()
            .and_then(|&r| self.impl_of(r, k, 0))
            .map(str::to_string);
        self.facts.grpc.push(GrpcFact::Server {
            service: svc.to_string(),
            impl_type,
            line: t.line(k),
        });
    }

    /// The type of a server implementation expression: `Impl::default()`, `Impl::new(…)`,
    /// `Impl { … }`, a unit struct `Impl`, `Arc::new(…)` around one, or a local bound to one.
    pub(super) fn impl_of(&self, (s, e): (usize, usize), at: usize, depth: u8) -> Option<&'a str> {
        let t = self.t;
        let mut s = s;
        while t.is_punct(s, b'&') {
            s += 1;
        }
        if s >= e {
            return None;
        }
        let mut segs = Vec::new();
        let mut j = s;
        while let Some(id) = t.ident(j) {
            segs.push(id);
            j += 1;
            if t.op2(j, b"::") {
                j += 2;
            } else {
                break;
            }
        }
        let &last = segs.last()?;
        let is_type = |x: &str| x.starts_with(|c: char| c.is_ascii_uppercase());
        if j == e {
            if segs.len() == 1 && !is_type(last) && depth == 0 {
                let l = self.asg.last(last, at)?;
                return self.impl_of(l.rhs, l.at, 1);
            }
            return is_type(last).then_some(last);
        }
        if t.is_punct(j, b'{') {
            return is_type(last).then_some(last);
        }
        if t.is_punct(j, b'(') && segs.len() >= 2 {
            let ty = segs[segs.len() - 2];
            if matches!(ty, "Arc" | "Box" | "Rc") && depth < 2 {
                let &inner = t.args(j).first()?;
                return self.impl_of(inner, at, depth + 1);
            }
            return is_type(ty).then_some(ty);
        }
        None
    }

    /// `OrdersClient::connect(addr)` / `::new(channel)`: a client, bound to the `let`, the
    /// field or the struct-literal field it is stored in.
    pub(super) fn client_new(&mut self, k: usize, id: &str, svc: &str) {
        let t = self.t;
        let Some(ctor) = t.ident(k + 3) else { return };
        if !matches!(ctor, "connect" | "new" | "with_interceptor" | "with_origin")
            || !t.is_punct(k + 4, b'(')
        {
            return;
        }
        let imported = self.client_names.contains(id);
        if !self.tonic_type(k, id, "_client", imported) {
            return;
        }
        let start = path_start(t, k);
        let mut var = None;
        if let Some(l) = self.asg.starting_at(start) {
            let scope = Scope::of_assignment(l, |at| self.enclosing_func(at));
            var = Some((t.text(l.at), scope));
        } else if start >= 2
            && t.is_punct(start - 1, b':')
            && !t.is_punct(start - 2, b':')
            && let Some(key) = t.ident(start - 2)
        {
            var = Some((key, Scope::Field));
        }
        if let Some((name, scope)) = var {
            self.bind(name, svc, scope);
        }
        self.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: var.map(|(n, _)| n.to_string()),
            line: t.line(k),
        });
    }

    /// `client: OrdersClient<Channel>` (a field or parameter typed as a client).
    pub(super) fn typed_client(&mut self, k: usize, id: &str, svc: &str) {
        let t = self.t;
        let mut ts = path_start(t, k);
        while ts > 0 && (t.is_punct(ts - 1, b'&') || t.is(ts - 1, "mut")) {
            ts -= 1;
        }
        if ts < 2 || !t.is_punct(ts - 1, b':') {
            return;
        }
        if ts >= 3 && t.is_punct(ts - 2, b':') {
            return;
        }
        let Some(name) = t.ident(ts - 2) else { return };
        let imported = self.client_names.contains(id);
        if !self.tonic_type(k, id, "_client", imported) {
            return;
        }
        let func = self.enclosing_func(k).map(|f| (f, self.funcs[f].start));
        let scope = Scope::of_declaration(&self.structs, k, func);
        self.bind(name, svc, scope);
    }

    pub(super) fn calls(&mut self) {
        let t = self.t;
        if self.bindings.is_empty() {
            return;
        }
        // `let mut c = self.client.clone();` makes `c` a client too.
        let fields: Vec<(&'a str, String)> = self
            .bindings
            .iter()
            .flat_map(|(n, v)| {
                v.iter()
                    .filter(|(_, s)| *s == Scope::Field)
                    .map(move |(svc, _)| (*n, svc.clone()))
            })
            .collect();
        let asg = self.asg;
        for l in &asg.list {
            let (s, _) = l.rhs;
            if l.name.contains('.') || !t.is(s, "self") || !t.is_punct(s + 1, b'.') {
                continue;
            }
            let Some(f) = t.ident(s + 2) else { continue };
            if let Some((_, svc)) = fields.iter().find(|(n, _)| *n == f)
                && let Some(func) = self.enclosing_func(l.at)
            {
                let svc = svc.clone();
                self.bind(t.text(l.at), &svc, Scope::Local(func, l.at));
            }
        }
        let is_rpc = |m: &str| !CLIENT_PLUMBING.contains(&m);
        let calls =
            common::client_calls(t, &self.bindings, is_rpc, |k| self.enclosing_func(k), false);
        self.facts.grpc.extend(calls);
    }

    pub(super) fn push_event(&mut self, role: EventRole, topic: Value, line: u32) {
        self.facts.events.push(EventFact {
            role,
            topic,
            via: "rdkafka".to_string(),
            line,
        });
    }

    /// `FutureRecord::to("t")`, `BaseRecord::<K, V>::to(&topic)`.
    pub(super) fn record_to(&mut self, k: usize) {
        let t = self.t;
        let mut j = k + 3;
        if t.is_punct(j, b'<') {
            j = self.t.skip_generic_args(j);
            if !t.op2(j, b"::") {
                return;
            }
            j += 2;
        }
        if !t.is(j, "to") || !t.is_punct(j + 1, b'(') {
            return;
        }
        if let Some(&r) = t.args(j + 1).first()
            && let Some(topic) = self.topic_expr(r)
        {
            self.push_event(EventRole::Producer, topic, t.line(j));
        }
    }

    /// `consumer.subscribe(&["a", TOPIC])`, `.subscribe(&topics)`.
    pub(super) fn subscribe(&mut self, k: usize) {
        let t = self.t;
        let Some(&(s, e)) = t.args(k + 1).first() else {
            return;
        };
        for (topic, line) in self.topic_list((s, e), k, 0) {
            self.push_event(EventRole::Consumer, topic, line);
        }
    }

    /// The topics of `&["a", "b"]`, `vec![…]`, or a local bound to one.
    pub(super) fn topic_list(
        &self,
        (s, e): (usize, usize),
        at: usize,
        depth: u8,
    ) -> Vec<(Value, u32)> {
        let t = self.t;
        let mut s = s;
        while t.is_punct(s, b'&') {
            s += 1;
        }
        let open = if t.is_punct(s, b'[') {
            Some(s)
        } else if t.is(s, "vec") && t.is_punct(s + 1, b'!') && t.is_punct(s + 2, b'[') {
            Some(s + 2)
        } else {
            None
        };
        if let Some(open) = open {
            return common::list_topics(t, open, |r| self.topic_expr(r));
        }
        if e == s + 1
            && depth == 0
            && let Some(name) = t.ident(s)
            && let Some(l) = self.asg.last(name, at)
        {
            let (rs, re) = l.rhs;
            let mut rs2 = rs;
            while t.is_punct(rs2, b'&') {
                rs2 += 1;
            }
            if t.is_punct(rs2, b'[') || t.is(rs2, "vec") {
                return self.topic_list((rs, re), l.at, 1);
            }
        }
        self.topic_expr((s, e))
            .map(|x| vec![(x, t.line(s))])
            .unwrap_or_default()
    }

    /// `s..e` without what does not change a string's value: leading `&` and `mut`, trailing
    /// `.as_str()`, `.to_string()`, `.clone()`, `.into()`; and the closure body of a lazy
    /// initializer (`Lazy::new(|| …)`, `LazyLock::new(|| { … })`).
    pub(super) fn peel(&self, (s, e): (usize, usize)) -> (usize, usize) {
        let t = self.t;
        let mut s = s;
        while t.is_punct(s, b'&') || t.kw(s, "mut") {
            s += 1;
        }
        let mut e = e.min(t.len());
        while e >= s + 4
            && t.is_punct(e - 4, b'.')
            && matches!(
                t.text(e - 3),
                "as_str" | "as_ref" | "to_string" | "to_owned" | "clone" | "into"
            )
            && t.is_punct(e - 2, b'(')
            && t.is_punct(e - 1, b')')
        {
            e -= 4;
        }
        // `Lazy::new(|| expr)`: the path, `::new`, the call spanning the rest.
        let lazy = (s..e.min(s + 16))
            .find(|&k| t.kw(k, "Lazy") || t.kw(k, "LazyLock") || t.kw(k, "LazyCell"))
            .filter(|&k| t.op2(k + 1, b"::") && t.kw(k + 3, "new") && t.is_punct(k + 4, b'('))
            .map(|k| k + 4)
            .filter(|&open| t.close(open) == Some(e - 1));
        if let Some(open) = lazy {
            let mut a = open + 1;
            if t.kw(a, "move") {
                a += 1;
            }
            if t.is_punct(a, b'|') && t.is_punct(a + 1, b'|') {
                a += 2;
                let b = e - 1;
                // A block body whose value is its last expression.
                if t.is_punct(a, b'{') && t.close(a) == Some(b - 1) {
                    let last = (a + 1..b - 1)
                        .rev()
                        .find(|&k| t.is_punct(k, b';'))
                        .map_or(a + 1, |k| k + 1);
                    return (last, b - 1);
                }
                return (a, b);
            }
        }
        (s, e)
    }

    /// The value of the expression in `r`, read by the shared evaluator; path prefixes that
    /// only say where a name lives (`crate::`, `super::`, `Self::`) are dropped from names.
    pub(super) fn value(&self, r: (usize, usize)) -> Value {
        let (s, e) = self.peel(r);
        if s >= e {
            return Value::dynamic();
        }
        let mut v = eval(self.t, (s, e), &ExprRules::RUST, self.asg);
        for p in &mut v.parts {
            if let Part::Ref { name, .. } = p {
                let mut bare = name.as_str();
                while let Some(rest) = ["crate.", "super.", "Self."]
                    .iter()
                    .find_map(|pre| bare.strip_prefix(pre))
                {
                    bare = rest;
                }
                if bare.len() < name.len() && !bare.is_empty() {
                    *name = bare.to_string();
                }
            }
        }
        v
    }

    /// A topic argument: a literal that looks like a topic name, or whatever the evaluator
    /// reads (an environment lookup with its default, a constant left to the graph —
    /// `topics::ORDERS` gives `topics.ORDERS` — or a run-time value, kept so the graph lists
    /// the site as unresolved).
    pub(super) fn topic_expr(&self, r: (usize, usize)) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        common::topic_of(self.value((s, e)))
    }

    /// The URL argument of an HTTP call. `sure` when the call is HTTP whatever its argument
    /// (`reqwest::get`); otherwise it must read like a URL, so `map.get(key)` is no request.
    pub(super) fn url(&self, r: (usize, usize), sure: bool) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        common::url_of(self.value((s, e)), sure)
    }
}
