//! Scopes and assignments, the pattern pass over the tokens, gRPC servers (`RegisterXServer`,
//! service descriptors), clients and the calls on them.

use super::*;

impl<'t, 'a> Go<'t, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // Scopes and assignments
    // -----------------------------------------------------------------------------------------

    /// The top-level function whose signature or body holds token `at`.
    pub(super) fn enclosing_func(&self, at: usize) -> Option<usize> {
        common::enclosing(&self.funcs, at, |f| {
            (f.start, f.body.or(f.params).map(|(_, c)| c))
        })
    }

    // -----------------------------------------------------------------------------------------
    // Servers, clients, events, routes
    // -----------------------------------------------------------------------------------------

    pub(super) fn patterns(&mut self) {
        let t = self.t;
        for k in 0..t.len() {
            let Some(id) = t.ident(k) else { continue };
            let call = t.is_punct(k + 1, b'(');
            let lit = t.is_punct(k + 1, b'{');
            let after_func = k > 0 && t.is(k - 1, "func");
            if call && !after_func {
                if let Some(svc) = id
                    .strip_prefix("Register")
                    .and_then(|r| r.strip_suffix("Server"))
                    .filter(|s| !s.is_empty())
                {
                    self.server(k, svc.to_string(), 1);
                } else if id == "RegisterService" {
                    self.service_desc_server(k);
                } else if let Some(svc) = id
                    .strip_prefix("New")
                    .and_then(|r| r.strip_suffix("Client"))
                    .filter(|s| !s.is_empty())
                {
                    self.client(k, svc);
                }
            } else if !call
                && !lit
                && let Some(svc) = id.strip_suffix("Client").filter(|s| !s.is_empty())
            {
                self.typed_client(k, svc);
            }
            if lit {
                self.composite_event(k, id);
            }
            if call && !after_func {
                self.call_event(k, id);
                self.http(k, id);
            }
        }
    }

    /// `pb.Register<Svc>Server(s, impl)`: the implementation is the second argument.
    pub(super) fn server(&mut self, k: usize, service: String, impl_arg: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let impl_type = args
            .get(impl_arg)
            .and_then(|&r| self.impl_of(r, k, 0))
            .map(str::to_string);
        self.facts.grpc.push(GrpcFact::Server {
            service,
            impl_type,
            line: t.line(k),
        });
    }

    /// `s.RegisterService(&pb.Orders_ServiceDesc, impl)`.
    pub(super) fn service_desc_server(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(&(a, b)) = args.first() else { return };
        let svc = (a..b)
            .rev()
            .find_map(|x| t.ident(x))
            .and_then(|id| id.strip_suffix("_ServiceDesc"))
            .filter(|s| !s.is_empty());
        if let Some(svc) = svc {
            self.server(k, svc.to_string(), 1);
        }
    }

    /// The type an expression evaluates to when it is visible: `&impl{}`, `impl{}`,
    /// `NewImpl(…)` (a constructor of this file), or a variable assigned one of those.
    pub(super) fn impl_of(&self, (s, e): (usize, usize), at: usize, depth: u8) -> Option<&'a str> {
        let t = self.t;
        let s = if t.is_punct(s, b'&') { s + 1 } else { s };
        let mut j = s;
        let mut last = None;
        while j < e && (t.ident(j).is_some() || t.is_punct(j, b'.')) {
            if let Some(id) = t.ident(j) {
                last = Some(id);
            }
            j += 1;
        }
        let last = last?;
        if j == e && e == s + 1 {
            let a = self.asg.last(last, at).filter(|_| depth == 0)?;
            return self.impl_of(a.rhs, a.at, depth + 1);
        }
        if t.is_punct(j, b'{') {
            return Some(last);
        }
        if t.is_punct(j, b'(') {
            let f = self.funcs[*self.func_by_name.get(last)?];
            return self.ctor_type(&f).or(f.result);
        }
        None
    }

    /// The type a constructor returns a literal of: `return &impl{…}` in its body.
    pub(super) fn ctor_type(&self, f: &Func<'a>) -> Option<&'a str> {
        let t = self.t;
        let (open, close) = f.body?;
        let mut k = open + 1;
        while k < close.min(open + 4096) {
            if t.is(k, "return") {
                let mut j = if t.is_punct(k + 1, b'&') {
                    k + 2
                } else {
                    k + 1
                };
                let mut last = None;
                while let Some(id) = t.ident(j) {
                    last = Some(id);
                    if !t.is_punct(j + 1, b'.') {
                        break;
                    }
                    j += 2;
                }
                if t.is_punct(j + 1, b'{') {
                    return last;
                }
            }
            k += 1;
        }
        None
    }

    /// `pb.New<Svc>Client(conn)`: a client, bound to the variable or field it is stored in.
    pub(super) fn client(&mut self, k: usize, svc: &str) {
        let t = self.t;
        let start = chain_start(t, k);
        let mut var = None;
        if let Some(a) = self.asg.starting_at(start) {
            // `g.orders = …` is a field, reached as `g.orders`; a plain name is a local of its
            // function from the assignment on, or a package variable.
            let scope = Scope::of_assignment(a, |at| self.enclosing_func(at));
            var = Some((t.text(a.at), scope));
        } else if start >= 2
            && t.is_punct(start - 1, b':')
            && !t.joined(start - 1)
            && let Some(key) = t.ident(start - 2)
        {
            // A composite literal field: `&Svc{orders: pb.NewOrdersClient(conn)}`.
            var = Some((key, Scope::Field));
        }
        let var = var.filter(|&(name, _)| name != "_");
        if let Some((name, scope)) = var {
            common::bind_client(&mut self.bindings, name, svc, scope);
        }
        self.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: var.map(|(n, _)| n.to_string()),
            line: t.line(k),
        });
        // `pb.NewXClient(conn).Method(ctx, req)`, on one line or continued on the next.
        if let Some(close) = t.is_punct(k + 1, b'(').then(|| t.close(k + 1)).flatten()
            && t.is_punct(close + 1, b'.')
            && t.is_punct(close + 3, b'(')
            && let Some(method) = t.ident(close + 2)
        {
            self.facts.push_grpc_call(
                svc.to_string(),
                format!("{}(…)", t.text(k)),
                method.to_string(),
                t.line(close + 2),
            );
        }
    }

    /// `orders pb.OrderServiceClient` (a struct field, parameter or variable typed as a
    /// client): binds the name for calls.
    pub(super) fn typed_client(&mut self, k: usize, svc: &str) {
        let t = self.t;
        if k < 3 || !t.is_punct(k - 1, b'.') || t.ident(k - 2).is_none() || t.is_punct(k - 3, b'.')
        {
            return;
        }
        let mut ts = k - 2;
        if t.is_punct(ts - 1, b'*') {
            ts -= 1;
        }
        let Some(name) = ts.checked_sub(1).and_then(|x| t.ident(x)) else {
            return;
        };
        if is_keyword(name) || t.is_punct(k + 1, b'.') {
            return;
        }
        let func = self.enclosing_func(k).map(|f| (f, self.funcs[f].start));
        let scope = Scope::of_declaration(&self.structs, k, func);
        common::bind_client(&mut self.bindings, name, svc, scope);
    }

    pub(super) fn calls(&mut self) {
        let t = self.t;
        let is_rpc = |m: &str| m.starts_with(|c: char| c.is_ascii_uppercase());
        let mut calls =
            common::client_calls(t, &self.bindings, is_rpc, |k| self.enclosing_func(k), true);
        // A field declared by a struct of this file with another type (`log *zap.Logger`) is
        // no client; only fields declared elsewhere in the package are left to the graph.
        if calls
            .iter()
            .any(|c| matches!(c, GrpcFact::Call { service: None, .. }))
        {
            let fields = self.struct_fields();
            calls.retain(|c| {
                !matches!(c, GrpcFact::Call { service: None, receiver, .. } if fields.contains(receiver.as_str()))
            });
        }
        self.facts.grpc.extend(calls);
    }

    /// The field names the structs of this file declare (the first word of each line of a
    /// body).
    fn struct_fields(&self) -> std::collections::HashSet<&'a str> {
        let t = self.t;
        let mut out = std::collections::HashSet::new();
        for &(open, close) in &self.structs {
            for i in open + 1..close.min(t.len()) {
                if t.is_punct(i - 1, b'{') || t.tok(i).is_some_and(|x| x.nl_before) {
                    out.extend(t.ident(i));
                }
            }
        }
        out
    }
}
