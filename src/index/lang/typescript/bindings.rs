//! Pass 1, bindings: which names hold a gRPC client, a Kafka producer or consumer, a NestJS
//! client, an HTTP client, a router or an instance of a workspace class, so that pass 3 can read
//! a call by its receiver. Also drives the import statements of [`super::imports`].

use super::{Bind, Ex, common};
use crate::index::facts::HttpFact;

/// Client types of well-known non-gRPC libraries (and NestJS transports), never a service.
const NOT_GRPC_CLIENTS: [&str; 18] = [
    "Client",
    "HttpClient",
    "ClientKafka",
    "ClientProxy",
    "ClientGrpc",
    "PrismaClient",
    "RedisClient",
    "MongoClient",
    "ApolloClient",
    "QueryClient",
    "SupabaseClient",
    "S3Client",
    "SQSClient",
    "SNSClient",
    "DynamoDBClient",
    "LambdaClient",
    "KafkaClient",
    "ElasticsearchClient",
];

/// The service of a generated client type name (`OrderServiceClient`, `OrderServiceClientImpl`
/// give `OrderService`), or `None` for names that are not client types.
fn client_type_service(ty: &str) -> Option<String> {
    // The suffix first (a name without it is no client type, listed or not): this runs for
    // most names of a file, and the list is the slower test.
    let stem = ty
        .strip_suffix("ClientImpl")
        .or_else(|| ty.strip_suffix("Client"))?;
    if NOT_GRPC_CLIENTS.contains(&ty) {
        return None;
    }
    (stem.len() > 1 && stem.starts_with(|c: char| c.is_ascii_uppercase())).then(|| stem.to_string())
}

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn bindings_and_imports(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut i = 0;
        while i < n {
            let dotted = i > 0 && (t.is(i - 1, ".") || t.is(i - 1, "?."));
            match t.ident(i) {
                Some("import") if !dotted => {
                    if t.is(i + 1, "(") {
                        if let Some(m) = t.str_value(i + 2) {
                            self.push_import(m.into_owned(), Vec::new(), None, i, false);
                        }
                    } else if !t.is(i + 1, ".") {
                        self.import_stmt(i);
                    }
                }
                Some("export") if !dotted => self.export_from(i),
                Some("require") if !dotted && t.is(i + 1, "(") => self.require(i),
                Some(_) if t.is(i + 1, ":") || (t.is(i + 1, "?") && t.is(i + 2, ":")) => {
                    self.typed_binding(i);
                }
                Some("new") => self.new_binding(i),
                Some("getService") if t.is(i + 1, "(") || t.is(i + 1, "<") => {
                    self.get_service(i);
                }
                Some("createPromiseClient" | "createClient" | "createCallbackClient")
                    if !dotted && t.is(i + 1, "(") =>
                {
                    // Connect-ES: `createClient(OrderService, transport)`.
                    if let Some(svc) = t
                        .ident(i + 2)
                        .filter(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
                        .filter(|_| t.is(i + 3, ",") || t.is(i + 3, ")"))
                    {
                        let var = self.assigned_name(i);
                        self.client_fact(svc, var, i);
                        if let Some(v) = var {
                            self.bind.insert(v, Bind::Grpc(svc.to_string()));
                        }
                    }
                }
                Some(m @ ("producer" | "consumer")) if dotted && t.is(i + 1, "(") => {
                    if let Some(c) = self.t.callee(i + 1)
                        && let Some(name) = self.assigned_name(c.start)
                    {
                        let b = if m == "producer" {
                            Bind::Producer
                        } else {
                            Bind::Consumer
                        };
                        self.bind.insert(name, b);
                    }
                }
                Some("create" | "extend") if dotted && t.is(i + 1, "(") => {
                    if let Some(c) = self.t.callee(i + 1)
                        && c.len == 2
                        && let Some(name) = self.assigned_name(c.start)
                    {
                        match c.first() {
                            "axios" | "got" | "ky" => {
                                self.bind.insert(name, Bind::Http);
                            }
                            "ClientProxyFactory" => {
                                self.bind.insert(name, Bind::Nest("ClientProxy"));
                            }
                            _ => {}
                        }
                    }
                }
                Some("Router") if t.is(i + 1, "(") => {
                    if let Some(c) = self.t.callee(i + 1)
                        && let Some(name) = self.assigned_name(c.start)
                    {
                        self.bind.entry(name).or_insert(Bind::Router(String::new()));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        // `app.use('/orders', ordersRouter)` mounts a router of this file under a prefix.
        for i in 0..n {
            if !(t.is(i, "use") && t.is(i + 1, "(") && i > 0 && t.is(i - 1, ".")) {
                continue;
            }
            let args = t.args(i + 1);
            if args.len() < 2 {
                continue;
            }
            let (s, e) = args[1];
            let Some(prefix) = t.str_value(args[0].0).filter(|p| p.starts_with('/')) else {
                continue;
            };
            // `app.use('/users', require('./routes/users'))`: a router module mounted inline.
            if e == s + 4 && t.is(s, "require") && t.is(s + 1, "(") {
                if let Some(spec) = t.str_value(s + 2).filter(|m| m.starts_with('.')) {
                    self.facts.http.push(HttpFact::Mount {
                        prefix: prefix.into_owned(),
                        router: spec.into_owned(),
                        line: t.line(i),
                    });
                }
                continue;
            }
            let Some(router) = t.ident(s).filter(|_| e == s + 1) else {
                continue;
            };
            match self.bind.get_mut(router) {
                Some(Bind::Router(p)) => {
                    if p.is_empty() {
                        *p = prefix.into_owned();
                    }
                }
                // A router of another module (`import users from './routes/users'`); a
                // middleware mounted this way is harmless: its file has no routes to prefix.
                None => self.facts.http.push(HttpFact::Mount {
                    prefix: prefix.into_owned(),
                    router: router.to_string(),
                    line: t.line(i),
                }),
                Some(_) => {}
            }
        }
    }

    /// `name: Type` (fields, parameters, variables): binds the name when the type says what
    /// it holds.
    fn typed_binding(&mut self, i: usize) {
        let t = self.t;
        let Some(name) = t.ident(i) else {
            return;
        };
        if matches!(name, "case" | "default" | "return") {
            return;
        }
        let mut k = if t.is(i + 1, "?") { i + 3 } else { i + 2 };
        // The last segment of a dotted type name.
        let Some(mut ty) = t.ident(k) else {
            return;
        };
        while t.is(k + 1, ".") && t.ident(k + 2).is_some() {
            k += 2;
            ty = t.text(k);
        }
        let bind = match ty {
            "ClientKafka" => Bind::Nest("ClientKafka"),
            "ClientProxy" => Bind::Nest("ClientProxy"),
            "HttpClient" | "HttpService" => Bind::Http,
            "Producer" => Bind::Producer,
            "Consumer" => Bind::Consumer,
            _ => match self.grpc_client_type(ty) {
                Some(svc) => {
                    // A typed field and the constructor parameter it is set from are one
                    // client: one fact per service for typed declarations.
                    if !self.has_client(&svc) {
                        self.client_fact(&svc, Some(name), i);
                    }
                    Bind::Grpc(svc)
                }
                None => return,
            },
        };
        self.bind.entry(name).or_insert(bind);
    }

    /// The service of a client type name when this file can hold gRPC clients of it: the
    /// name says so (`…ServiceClient`, ts-proto `…ClientImpl`) or the file refers to gRPC
    /// or protobuf modules. Keeps `new SocksClient(…)` and friends out.
    fn grpc_client_type(&self, ty: &str) -> Option<String> {
        let svc = client_type_service(ty)?;
        (self.grpc_hint || ty.ends_with("ClientImpl") || svc.ends_with("Service")).then_some(svc)
    }

    fn has_client(&self, service: &str) -> bool {
        common::has_client(&self.facts.grpc, service)
    }

    fn client_fact(&mut self, service: &str, var: Option<&str>, at: usize) {
        let line = self.line(at);
        let grpc = &mut self.facts.grpc;
        common::push_client(grpc, &mut self.client_vars, (service, var), line);
    }

    /// `new X(…)`: gRPC clients, NestJS clients, routers.
    fn new_binding(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        let mut segs: Vec<&'t str> = Vec::new();
        while let Some(id) = t.ident(k) {
            segs.push(id);
            if t.is(k + 1, ".") {
                k += 2;
            } else {
                k += 1;
                break;
            }
            if segs.len() > 6 {
                return;
            }
        }
        let Some(&last) = segs.last() else {
            return;
        };
        let k = self.t.skip_angles(k, t.len());
        if !t.is(k, "(") {
            return;
        }
        let var = self.assigned_name(i);
        let args = t.args(k);
        match last {
            "ClientKafka" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Nest("ClientKafka"));
                }
                return;
            }
            "Router" => {
                let prefix = args
                    .first()
                    .and_then(|&(a, _)| self.object_value(a, "prefix"))
                    .and_then(|v| t.str_value(v))
                    .map(|p| p.into_owned())
                    .unwrap_or_default();
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Router(prefix));
                }
                return;
            }
            _ => {}
        }
        let creds = args.get(1).is_some_and(|&(a, e)| {
            (a..e).any(|j| {
                t.ident(j).is_some_and(|id| {
                    let l = id.to_ascii_lowercase();
                    l.contains("cred") || l.contains("insecure")
                })
            })
        });
        let service = if let Some(svc) = client_type_service(last) {
            // `new OrderServiceClient(addr, creds)`, `new OrderServiceClientImpl(rpc)`.
            (creds || self.grpc_client_type(last).is_some()).then_some(svc)
        } else if segs.len() >= 2 && last.starts_with(|c: char| c.is_ascii_uppercase()) {
            // `new pkg.orders.OrderService(addr, creds)`: a dynamic grpc-js client.
            (creds || (args.len() >= 2 && last.ends_with("Service"))).then(|| last.to_string())
        } else {
            None
        };
        if let Some(svc) = service {
            // `new proto.X(addr, creds).method(req, cb)`: a call on the client just built; the
            // name it is assigned to holds the call's result, not the client.
            if let Some(close) = t.close(k)
                && t.is(close + 1, ".")
                && let Some(method) = t.ident(close + 2)
                && t.is(close + 3, "(")
            {
                self.client_fact(&svc, None, i);
                let line = self.line(close + 2);
                self.facts
                    .push_grpc_call(svc, format!("new {last}(…)"), method.to_string(), line);
                return;
            }
            self.client_fact(&svc, var, i);
            if let Some(v) = var {
                self.bind.insert(v, Bind::Grpc(svc));
            }
        } else if let (Some(v), [class]) = (var, segs.as_slice())
            && let Some(imported) = self
                .facts
                .imports
                .iter()
                .filter(|imp| imp.module.starts_with('.'))
                .find_map(|imp| imp.imported_as(class))
        {
            // `import { OrdersApi as Api }`: `new Api()` is an `OrdersApi`.
            let imported = imported.to_string();
            self.bind.entry(v).or_insert(Bind::Instance(imported));
        }
    }

    /// `this.client.getService<OrderServiceClient>('OrderService')`.
    fn get_service(&mut self, i: usize) {
        let t = self.t;
        let k = self.t.skip_angles(i + 1, t.len());
        if !t.is(k, "(") {
            return;
        }
        let from_arg = t.str_value(k + 1).map(|s| s.into_owned());
        let from_type = t
            .ident(i + 2)
            .filter(|_| t.is(i + 1, "<"))
            .and_then(client_type_service);
        let Some(svc) = from_arg.or(from_type) else {
            return;
        };
        let start = self.t.callee(k).map_or(i, |c| c.start);
        let var = self.assigned_name(start);
        self.client_fact(&svc, var, i);
        if let Some(v) = var {
            self.bind.insert(v, Bind::Grpc(svc));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::index::facts::GrpcFact;
    use crate::index::lang::test_support::grpc_calls;

    #[test]
    fn a_client_built_in_the_call_expression_and_getters() {
        let src = "const proto = grpc.loadPackageDefinition(def).shop;\nnew proto.OfferService(addr, grpc.credentials.createInsecure()).getOffers(req, (err, res) => {\n  res.getOffersList();\n});\n";
        assert_eq!(
            grpc_calls(&extract("web.js", src)),
            vec![(Some("OfferService"), "getOffers", 2)]
        );
    }

    #[test]
    fn nest_get_service_client_binding() {
        let src = r#"export class Svc {
  private orders: any;
  constructor(private client: ClientGrpc) {}
  onModuleInit() {
    this.orders = this.client.getService<OrderServiceClient>('OrderService');
  }
  run() { return this.orders.createOrder({}); }
}
"#;
        let f = extract("src/svc.ts", src);
        assert_eq!(
            f.grpc,
            vec![
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("orders".into()),
                    line: 5
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "orders".into(),
                    method: "createOrder".into(),
                    line: 7
                },
            ]
        );
    }
}
