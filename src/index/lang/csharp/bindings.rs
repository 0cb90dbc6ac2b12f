//! Pass 1, bindings: which fields, parameters and variables hold a gRPC client, a Kafka
//! producer or consumer, an `HttpClient` or a route group, so the uses pass can read a call by
//! its receiver.

use super::*;
use crate::index::facts::{Binding, Part};
use crate::index::lang::value::Scope;

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn bindings(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut poll = Every::new();
        for i in 0..n {
            if poll.stop() {
                return;
            }
            // `Svc.SvcClient GetClient(…) {` — a method handing out a client.
            if let Some(name) = t.ident(i)
                && i > 1
                && t.is_punct(i + 1, b'(')
                && let Some(ty) = t.ident(i - 1)
                && !MODIFIERS.contains(&ty)
                && !matches!(ty, "new" | "return" | "await" | "void")
            {
                let qualifier = (i >= 3 && t.is_punct(i - 2, b'.'))
                    .then(|| t.ident(i - 3))
                    .flatten();
                let (ty, qualifier) = match self.aliases.get(ty) {
                    Some((q, target)) => (target.clone(), q.clone()),
                    None => (ty.to_string(), qualifier.map(str::to_string)),
                };
                if let Some(svc) = self.grpc_client_type(&ty, qualifier.as_deref()) {
                    self.bind.entry(name).or_insert(Bind::GrpcFactory(svc));
                }
            }
            // `Type name` declarations (fields, parameters, locals, properties).
            if let Some(name) = t.ident(i)
                && i > 0
                && matches!(t.punct(i + 1), b';' | b'=' | b',' | b')' | b'{')
                && !t.is(i + 1, "==")
            {
                let ty_end = i - 1;
                let ty = if t.punct(ty_end) == b'>' {
                    // `IProducer<string, Order> producer`: the name before the `<`.
                    self.generic_base_before(ty_end)
                } else {
                    t.ident(ty_end).filter(|ty| !MODIFIERS.contains(ty))
                };
                if let Some(ty) = ty {
                    // `Outer.OuterClient name`: the qualifier, for generated gRPC clients.
                    let qualifier = (ty_end >= 2 && t.punct(ty_end - 1) == b'.')
                        .then(|| t.ident(ty_end - 2))
                        .flatten();
                    self.typed(name, ty, qualifier, i);
                }
            }
            // Every arm but `new` needs a `<` or `(` next: that byte test first, so most
            // identifiers cost one comparison instead of one per arm.
            let word = match t.ident(i) {
                Some("new") => Some("new"),
                w if matches!(t.punct(i + 1), b'<' | b'(') => w,
                _ => None,
            };
            match word {
                Some("new") => self.new_binding(i),
                Some("AddGrpcClient") if t.punct(i + 1) == b'<' => {
                    let k = t.skip_angles(i + 1, n);
                    if let Some(svc) = t.ident(k.saturating_sub(2)).and_then(client_type_service) {
                        self.client_fact(&svc, None, i);
                    }
                }
                Some("Build") if t.punct(i + 1) == b'(' && i > 0 && t.punct(i - 1) == b'.' => {
                    // `new ProducerBuilder<…>(config).Build()` is handled at `new`.
                }
                Some("CreateClient") if t.punct(i + 1) == b'(' => {
                    if let Some(c) = t.callee(i + 1)
                        && let Some(v) = self.assigned_name(c.start)
                    {
                        self.bind.insert(v, Bind::Http);
                    }
                }
                Some("MapGrpcService") if t.punct(i + 1) == b'<' => {
                    // `app.MapGrpcService<BasketService>()`: a registration of the
                    // implementation; the graph finds its service from the class.
                    let k = t.skip_angles(i + 1, n);
                    if let Some(imp) = t.ident(k.saturating_sub(2)) {
                        let line = self.line(i);
                        self.facts.grpc.push(GrpcFact::Server {
                            service: String::new(),
                            impl_type: Some(imp.to_string()),
                            line,
                        });
                    }
                }
                Some("MapGroup") if t.punct(i + 1) == b'(' => {
                    if let Some(c) = t.callee(i + 1)
                        && let Some(v) = self.assigned_name(c.start)
                        && let Some(prefix) = t.str_value(i + 2)
                    {
                        let (parent, inherited) = match c.receiver().and_then(|r| self.bind.get(r))
                        {
                            Some(Bind::Group(p, vs)) => (p.clone(), vs.clone()),
                            _ => (String::new(), Vec::new()),
                        };
                        let chained = t
                            .close(i + 1)
                            .map(|close| uses::chained_versions(t, close))
                            .unwrap_or_default();
                        let versions = if chained.declared.is_empty() {
                            inherited
                        } else {
                            chained.declared
                        };
                        self.bind
                            .insert(v, Bind::Group(join_route(&parent, &prefix), versions));
                    }
                }
                _ => {}
            }
        }
        // A typed field or parameter only refers to a client: its calls resolve through the
        // binding, and the construction or registration (`new Svc.SvcClient(ch)`,
        // `AddGrpcClient<Svc.SvcClient>`) is the client fact. A file that only declares one
        // still says it holds a client, when no construction is in the file.
        let constructed = self
            .facts
            .grpc
            .iter()
            .any(|g| matches!(g, GrpcFact::Client { .. }));
        for (svc, name, at) in std::mem::take(&mut self.typed_clients) {
            if !constructed && !self.has_client(&svc) && !self.injected(at) {
                self.client_fact(&svc, Some(name), at);
            }
        }
    }

    /// The last name segment of the generic type whose `>` is at `close`.
    fn generic_base_before(&self, close: usize) -> Option<&'t str> {
        let t = self.t;
        let open = t.open_angle_before(close, b";{}()=", 32)?;
        t.ident(open.checked_sub(1)?)
    }

    fn typed(&mut self, name: &'t str, ty: &str, qualifier: Option<&str>, at: usize) {
        // `using GrpcBasketClient = eShop.Basket.API.Grpc.Basket.BasketClient;`
        let (ty, qualifier) = match self.aliases.get(ty) {
            Some((q, target)) => (target.clone(), q.clone()),
            None => (ty.to_string(), qualifier.map(str::to_string)),
        };
        let bind = match ty.as_str() {
            "HttpClient" => Bind::Http,
            "IProducer" => Bind::Producer,
            "IConsumer" => Bind::Consumer,
            _ if events::is_bus_type(&ty) => Bind::Bus,
            _ => match self.grpc_client_type(&ty, qualifier.as_deref()) {
                Some(svc) => {
                    // A typed field and the constructor parameter it is set from are one
                    // client: one fact per service, and only when the file constructs none
                    // (the construction is the better evidence).
                    self.typed_clients.push((svc.clone(), name, at));
                    Bind::Grpc(svc)
                }
                None => return,
            },
        };
        self.bind.entry(name).or_insert(bind);
    }

    /// True when the declaration at `at` is a constructor parameter (dependency injection:
    /// the container builds the client, elsewhere).
    fn injected(&self, at: usize) -> bool {
        let t = self.t;
        let mut k = at;
        let mut steps = 0;
        while k > 0 && steps < 64 {
            k -= 1;
            steps += 1;
            match t.punct(k) {
                b'(' => {
                    return t
                        .ident(k.saturating_sub(1))
                        .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_uppercase()));
                }
                b';' | b'{' | b'}' | b')' => return false,
                _ => {}
            }
        }
        false
    }

    /// `using Alias = A.B.Svc.SvcClient;` directives, before any declaration uses them.
    pub(super) fn aliases(&mut self) {
        let t = self.t;
        for i in 0..t.len() {
            if !(t.kw(i, "using") && t.ident(i + 1).is_some() && t.is_punct(i + 2, b'=')) {
                continue;
            }
            let mut segs: Vec<&str> = Vec::new();
            let mut k = i + 3;
            while let Some(id) = t.ident(k) {
                segs.push(id);
                if t.is_punct(k + 1, b'.') {
                    k += 2;
                } else {
                    break;
                }
            }
            if let Some(&last) = segs.last() {
                let q = segs.len().checked_sub(2).map(|j| segs[j].to_string());
                self.aliases
                    .insert(t.text(i + 1).to_string(), (q, last.to_string()));
            }
        }
    }

    fn has_client(&self, service: &str) -> bool {
        common::has_client(&self.facts.grpc, service)
    }

    /// The service of a client type when it is a generated gRPC client: qualified by its
    /// service (`OrderService.OrderServiceClient`), named `…ServiceClient`, or in a file that
    /// uses `Grpc.*` / `*.Protos`.
    pub(super) fn grpc_client_type(&self, ty: &str, qualifier: Option<&str>) -> Option<String> {
        let svc = client_type_service(ty)?;
        (qualifier == Some(svc.as_str()) || svc.ends_with("Service") || self.grpc_hint)
            .then_some(svc)
    }

    fn client_fact(&mut self, service: &str, var: Option<&str>, at: usize) {
        let line = self.line(at);
        let grpc = &mut self.facts.grpc;
        common::push_client(grpc, &mut self.client_vars, (service, var), line);
    }

    /// `new Svc.SvcClient(channel)`, `new ProducerBuilder<…>(…)`, `new HttpClient(…)`.
    fn new_binding(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        let mut last = None;
        let mut qualifier = None;
        while let Some(id) = t.ident(k) {
            qualifier = last;
            last = Some(id);
            if t.punct(k + 1) == b'.' {
                k += 2;
            } else {
                k += 1;
                break;
            }
        }
        let Some(last) = last else {
            return;
        };
        let var = self.assigned_name(i);
        match last {
            "ProducerBuilder" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Producer);
                }
            }
            "ConsumerBuilder" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Consumer);
                }
            }
            "HttpClient" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Http);
                }
            }
            _ => {
                if t.punct(k) != b'(' {
                    return;
                }
                if let Some(svc) = self.grpc_client_type(last, qualifier) {
                    self.client_fact(&svc, var, i);
                    if let Some(v) = var {
                        self.bind.insert(v, Bind::Grpc(svc));
                    }
                }
            }
        }
    }
}

impl Ex<'_, '_, '_> {
    /// `public static string Url(NavigationManager nav) => $"user/login?returnUrl={…}";`: a
    /// method of the file that returns one string starting with literal text, as a binding
    /// `Class.Method()` ([`super::uses::method_ref`]), so a navigation in another file that
    /// calls it (`NavigateTo(LogIn.Url(Nav))`, `href="@ItemHelper.Url(item)"`) reads its target.
    pub(super) fn method_returns(&mut self) {
        let methods: Vec<(String, String, u32)> = self
            .facts
            .symbols
            .iter()
            .filter(|s| s.kind == SymbolKind::Method)
            .filter_map(|s| {
                let class = s.container.as_deref()?.rsplit('.').next()?;
                Some((class.to_string(), s.name.clone(), s.line))
            })
            .collect();
        for (class, name, line) in methods {
            // One method of that name in the file: the helper table is by bare name.
            if self.facts.symbols.iter().filter(|s| s.name == name).count() != 1 {
                continue;
            }
            let Some((_, (a, b))) = self.asg.function(&name) else {
                continue;
            };
            let value = eval(self.t, (a, b), &ExprRules::CSHARP, self.asg);
            if !matches!(value.parts.first(), Some(Part::Lit(s)) if !s.trim().is_empty()) {
                continue;
            }
            self.facts.bindings.push(Binding {
                name: super::uses::method_ref(&class, &name),
                value,
                line,
            });
        }
    }
}
