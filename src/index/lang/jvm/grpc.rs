//! gRPC: servers (`*Grpc.*ImplBase`, `@GrpcService`, ScalaPB) from the declarations, and the
//! stubs a file holds with the RPCs called on them.

use super::recognize::Ctx;
use super::*;

const STUB_SUFFIXES: [&str; 5] = [
    "BlockingV2Stub",
    "BlockingStub",
    "FutureStub",
    "CoroutineStub",
    "Stub",
];

/// The service of a gRPC stub type `Svc…Stub` qualified by `qual` (`SvcGrpc`, `SvcGrpcKt`,
/// `ReactorSvcGrpc`).
pub(super) fn stub_service<'a>(qual: &str, ty: &'a str) -> Option<&'a str> {
    let base = qual
        .strip_suffix("GrpcKt")
        .or_else(|| qual.strip_suffix("Grpc"))?;
    STUB_SUFFIXES.iter().find_map(|suf| {
        let svc = ty.strip_suffix(suf)?;
        (!svc.is_empty() && base.ends_with(svc)).then_some(svc)
    })
}

/// The service of a gRPC server base `Svc(Coroutine)ImplBase` qualified by `SvcGrpc`/`SvcGrpcKt`.
fn implbase_service<'a>(qual: Option<&str>, ty: &'a str) -> Option<&'a str> {
    let svc = ty.strip_suffix("ImplBase")?;
    let svc = svc.strip_suffix("Coroutine").unwrap_or(svc);
    if svc.is_empty() {
        return None;
    }
    let base = qual?
        .strip_suffix("GrpcKt")
        .or_else(|| qual?.strip_suffix("Grpc"))?;
    base.ends_with(svc).then_some(svc)
}

impl<'s, 'a> Ctx<'s, 'a> {
    pub(super) fn grpc(&self, facts: &mut FileFacts) {
        self.grpc_servers(facts);
        let vars = self.grpc_clients(facts);
        if vars.is_empty() {
            return;
        }
        self.grpc_calls(&vars, facts);
    }

    /// Servers from declarations: a `…ImplBase` (or ScalaPB / fs2-grpc) supertype, or
    /// `@GrpcService` on a class implementing the generated interface.
    fn grpc_servers(&self, facts: &mut FileFacts) {
        let src = self.src;
        for ty in &self.model.types {
            let mut service: Option<&str> = None;
            for &(qual, name) in &ty.supers {
                let q = qual.or_else(|| self.grpc_imports.get(name).map(String::as_str));
                if let Some(s) = implbase_service(q, name) {
                    service = Some(s);
                    break;
                }
                // ScalaPB: `extends OrdersGrpc.Orders`; fs2-grpc: `extends OrdersFs2Grpc[F, M]`.
                if src.dialect == Dialect::Scala {
                    if let Some(q) = qual
                        && q.strip_suffix("Grpc") == Some(name)
                    {
                        service = Some(name);
                        break;
                    }
                    if let Some(s) = name.strip_suffix("Fs2Grpc").filter(|s| !s.is_empty()) {
                        service = Some(s);
                        break;
                    }
                }
            }
            let annotated = ty
                .anns
                .iter()
                .any(|a| matches!(a.name, "GrpcService" | "GRpcService"));
            if service.is_none() && annotated {
                // `@GrpcService class X extends OrdersImplBase` (nested class imported), or a
                // Quarkus/Mutiny service implementing the generated interface.
                service = ty
                    .supers
                    .iter()
                    .find_map(|&(_, n)| {
                        n.strip_suffix("ImplBase")
                            .map(|s| s.strip_suffix("Coroutine").unwrap_or(s))
                            .filter(|s| !s.is_empty())
                    })
                    .or(match ty.supers.as_slice() {
                        [(_, only)] => Some(*only),
                        _ => None,
                    });
            }
            if let Some(service) = service {
                facts.grpc.push(GrpcFact::Server {
                    service: service.to_string(),
                    impl_type: Some(ty.name.to_string()),
                    line: ty.line,
                });
            }
        }
    }

    /// Clients: constructions (`XGrpc.newBlockingStub(ch)`, with a call chained on one), then
    /// typed declarations without one. Returns the client variables → their service.
    fn grpc_clients(&self, facts: &mut FileFacts) -> HashMap<&'a str, &'a str> {
        let src = self.src;
        let mut clients: Vec<(u32, &'a str, Option<&'a str>)> = Vec::new();
        let mut constructed: HashSet<&'a str> = HashSet::new();
        let mut vars: HashMap<&'a str, &'a str> = HashMap::new();
        let n = src.len();
        for k in 0..n {
            let Some(q) = src.ident(k) else { continue };
            if !(q.ends_with("Grpc") || q.ends_with("GrpcKt")) || !src.is(k + 1, ".") {
                continue;
            }
            let Some(m) = src.ident(k + 2) else { continue };
            let base = q
                .strip_suffix("GrpcKt")
                .or_else(|| q.strip_suffix("Grpc"))
                .unwrap_or(q);
            let service = match m {
                "newBlockingStub" | "newStub" | "newFutureStub" | "newBlockingV2Stub" => Some(base),
                "stub" | "blockingStub" if src.dialect == Dialect::Scala => Some(base),
                "bindService" if src.dialect == Dialect::Scala => {
                    // ScalaPB `OrdersGrpc.bindService(new OrdersImpl, ec)`.
                    if src.is(k + 3, "(") {
                        let mut j = k + 4;
                        if src.kw(j, "new") {
                            j += 1;
                        }
                        let impl_type = src
                            .ident(j)
                            .filter(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
                        facts.grpc.push(GrpcFact::Server {
                            service: base.to_string(),
                            impl_type: impl_type.map(str::to_string),
                            line: src.toks[k].line,
                        });
                    }
                    None
                }
                _ => stub_service(q, m).filter(|_| m.ends_with("CoroutineStub")),
            };
            let Some(service) = service else { continue };
            let call = src.skip_generics(k + 3);
            if !src.is(call, "(") || service.is_empty() {
                continue;
            }
            let var = self.assigned_var(k);
            if let Some(v) = var {
                constructed.insert(v);
                vars.insert(v, service);
            }
            clients.push((src.toks[k].line, service, var));
            // `OrdersGrpc.newBlockingStub(ch).createOrder(req)`.
            let after = src.close_or_end(call) + 1;
            if let Some((mi, method)) = self.called_method(after) {
                facts.push_grpc_call(
                    service.to_string(),
                    q.to_string(),
                    method.to_string(),
                    src.toks[mi].line,
                );
            }
        }
        // Typed declarations, in token order, that no construction already accounts for.
        let mut typed: Vec<(usize, &'a str, &'a str)> = Vec::new();
        for k in 0..n {
            let Some(ty) = src.ident(k).filter(|t| t.ends_with("Stub")) else {
                continue;
            };
            let qual = if k >= 2 && src.is(k - 1, ".") {
                src.ident(k - 2)
            } else {
                self.grpc_imports.get(ty).map(String::as_str)
            };
            let Some(svc) = qual.and_then(|q| stub_service(q, ty)) else {
                continue;
            };
            if let Some((vi, var)) = self.declared_var(k) {
                typed.push((vi, var, svc));
            }
        }
        let mut seen_typed: HashSet<&str> = HashSet::new();
        for (vi, var, svc) in typed {
            vars.entry(var).or_insert(svc);
            if !constructed.contains(var) && seen_typed.insert(var) {
                clients.push((src.toks[vi].line, svc, Some(var)));
            }
        }
        crate::order::sort_by_key(&mut clients, |c| c.0);
        for (line, service, var) in clients {
            facts.grpc.push(GrpcFact::Client {
                service: service.to_string(),
                var: var.map(str::to_string),
                line,
            });
        }
        vars
    }

    /// Calls: `stub.createOrder(req)`, `this.stub.createOrder(req)`, through `with…(…)`, on
    /// the client variables `vars` (→ their service).
    fn grpc_calls(&self, vars: &HashMap<&'a str, &'a str>, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        // Client variables are few: a bitmask of their lengths keeps this loop cheap.
        let lengths: u64 = vars.keys().fold(0, |m, v| m | (1u64 << v.len().min(63)));
        for k in 0..n {
            let Some(v) = src
                .ident(k)
                .filter(|v| lengths & (1u64 << v.len().min(63)) != 0)
            else {
                continue;
            };
            let Some(&svc) = vars.get(v) else { continue };
            if k >= 1 && src.is(k - 1, ".") && !(k >= 2 && src.kw(k - 2, "this")) {
                continue;
            }
            if let Some((mi, method)) = self.called_method(k + 1) {
                facts.push_grpc_call(
                    svc.to_string(),
                    v.to_string(),
                    method.to_string(),
                    src.toks[mi].line,
                );
            }
        }
    }

    /// The RPC method called at `.m(` starting at token `i`, looking through stub
    /// configuration calls (`.withDeadlineAfter(…)`).
    fn called_method(&self, mut i: usize) -> Option<(usize, &'a str)> {
        let src = self.src;
        for _ in 0..8 {
            if !(src.is(i, ".") || src.is(i, "?.")) {
                return None;
            }
            let m = src.ident(i + 1)?;
            let open = src.skip_generics(i + 2);
            if !src.is(open, "(") {
                return None;
            }
            if m.starts_with("with") {
                i = src.close_or_end(open) + 1;
                continue;
            }
            if matches!(
                m,
                "getChannel" | "getCallOptions" | "toString" | "hashCode" | "equals" | "build"
            ) {
                return None;
            }
            // Every stub method takes a request or a response observer: a call without
            // arguments is a getter on a message (`response.getOffers()`), never an RPC.
            if src.close(open) == Some(open + 1) {
                return None;
            }
            return Some((i + 1, m));
        }
        None
    }
}
