//! Pass 3, uses: every call of the file, read by its callee and what its receiver is bound to —
//! gRPC calls and `addService` servers, amqplib events, Nest's Swagger route — and handed to the
//! HTTP client, event and route readers of the sibling modules.

use super::{Bind, Ex, HTTP_CLIENT_NAMES, VERBS};
use crate::index::facts::{EventFact, EventRole, GrpcFact, HttpFact, Value};
use crate::index::lang::common::{self, join_route};
use crate::index::lang::tokens::{Chain, Tokens};
use crate::index::lang::value::{ExprRules, eval};

/// Methods of a gRPC client object that are not RPCs.
const CLIENT_PLUMBING: [&str; 9] = [
    "getService",
    "close",
    "waitForReady",
    "getChannel",
    "then",
    "bind",
    "makeUnaryRequest",
    "on",
    "catch",
];

/// A receiver named like an AMQP channel (`ch`, `channel`, `orderChannel`, `amqpChan`,
/// `rabbitCh`).
fn is_amqp_channel(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "ch"
        || lower.ends_with("channel")
        || lower.ends_with("chan")
        || lower.starts_with("amqp")
        || lower.starts_with("rabbit")
}

/// The service named by the last segment of an `addService` definition expression.
fn service_of_definition(seg: &str) -> String {
    match seg.strip_suffix("Service") {
        Some(stem) if stem.ends_with("Service") => stem.to_string(),
        _ => seg.to_string(),
    }
}

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn uses(&mut self) {
        let t = self.t;
        for p in 0..t.len() {
            if t.is(p, "(")
                && let Some(c) = self.t.callee(p)
            {
                self.call(&c, p);
            }
        }
    }

    fn call(&mut self, c: &Chain<'t>, p: usize) {
        let last = c.last();
        let recv = c.receiver();
        if !c.after_call && self.library_call(c, p) {
            return;
        }
        let bound = recv.and_then(|r| self.bind.get(r)).cloned();
        if let Some(r) = recv {
            match &bound {
                Some(Bind::Http) if VERBS.contains(&last) || last == "request" => {
                    return self.http_call(p, VERBS.contains(&last).then_some(last), true, true);
                }
                // A call without arguments is a getter on a message (`res.getOffersList()`):
                // every client method takes a request.
                Some(Bind::Grpc(svc))
                    if !CLIENT_PLUMBING.contains(&last) && self.t.close(p) != Some(p + 1) =>
                {
                    let line = self.line(p);
                    self.facts.grpc.push(GrpcFact::Call {
                        service: Some(svc.clone()),
                        receiver: r.to_string(),
                        method: last.to_string(),
                        line,
                    });
                    return;
                }
                Some(Bind::Nest(via)) if matches!(last, "emit" | "send") => {
                    let via = *via;
                    return self.nest_emit(p, via);
                }
                // `this.ordersApi.createOrder(…)`: an HTTP call when `OrdersApi.createOrder` is
                // a generated client's method that makes one (the graph decides).
                Some(Bind::Instance(class)) if !c.after_call => {
                    let line = self.line(p);
                    self.facts.http.push(HttpFact::Call {
                        method: None,
                        url: Value::reference(format!("{class}.{last}()")),
                        line,
                    });
                    return;
                }
                _ => {}
            }
            let lower = r.to_ascii_lowercase();
            if matches!(last, "send" | "sendBatch")
                && (bound == Some(Bind::Producer) || lower.contains("producer"))
            {
                return self.kafka_topics(p, EventRole::Producer);
            }
            if last == "subscribe" && (bound == Some(Bind::Consumer) || lower.contains("consumer"))
            {
                return self.kafka_topics(p, EventRole::Consumer);
            }
        }
        if recv.is_some() && self.aws_messaging(p, last) {
            return;
        }
        if let Some(r) = recv
            && let Some(lib) = common::PubSub::for_receiver(self.pubsub, r)
            && let Some((role, stream)) = common::pubsub_method(lib, last)
        {
            return self.pubsub_call(p, lib, role, stream);
        }
        if let Some(r) = recv
            && matches!(last, "publish" | "sendToQueue" | "consume" | "bindQueue")
            && is_amqp_channel(r)
        {
            return self.amqplib_call(p, last);
        }
        match last {
            "addService" if recv.is_some() => self.add_service(p),
            "route" if recv.is_some() && !c.after_call => self.route_chain(c, p, bound.as_ref()),
            verb if VERBS.contains(&verb) && !c.after_call => {
                if let Some(r) = recv
                    && !self.maybe_route(r, verb, p, bound.as_ref())
                    && HTTP_CLIENT_NAMES.contains(&r)
                {
                    self.http_call(p, Some(verb), false, true);
                }
            }
            _ => {}
        }
    }

    /// A call of a global or imported HTTP library (`fetch`, `axios.get`, a renamed `request`)
    /// or Nest's `SwaggerModule.setup`: read, and true; false for any other call.
    fn library_call(&mut self, c: &Chain<'t>, p: usize) -> bool {
        match (c.len, c.first(), c.last()) {
            (1, _, "fetch") | (2, "window" | "globalThis", "fetch") => {
                self.fetch_call(p);
            }
            (1, "axios" | "got" | "ky" | "superagent" | "$http" | "request" | "needle", _) => {
                self.http_call(p, None, true, true);
            }
            (2, "axios" | "got" | "ky" | "superagent" | "$http" | "request" | "needle", verb)
                if VERBS.contains(&verb) =>
            {
                self.http_call(p, Some(verb), false, true);
            }
            (2, "axios", "request") => self.http_call(p, None, true, true),
            // An HTTP library imported under another name (OpenAPI Generator's
            // `import localVarRequest from 'request'`).
            (1, name, _)
                if self.facts.imports.iter().any(|i| {
                    matches!(
                        i.module.as_str(),
                        "axios" | "got" | "ky" | "superagent" | "request" | "needle"
                    ) && (i.alias.as_deref() == Some(name) || i.local_names().any(|n| n == name))
                }) =>
            {
                self.http_call(p, None, true, true);
            }
            // Nest's `SwaggerModule.setup('api', app, doc)` serves the API docs at `/api`.
            (2, "SwaggerModule", "setup") => {
                if let Some(&(a, e)) = self.t.args(p).first()
                    && let Some(path) = self.t.str_value(a).filter(|_| e == a + 1)
                {
                    let line = self.line(p);
                    self.facts.http.push(HttpFact::Route {
                        method: "GET".into(),
                        path: join_route("/", &path),
                        handler: Some("SwaggerModule.setup".into()),
                        line,
                    });
                }
            }
            _ => return false,
        }
        true
    }

    /// amqplib: `channel.publish(exchange, key, content)` sends to the routing key and
    /// produces to the exchange (the default exchange `''` is none), `sendToQueue(queue,
    /// …)` to the queue, `consume(queue, cb)` consumes it, `bindQueue(queue, exchange,
    /// key)` consumes the exchange — on a receiver named like a channel.
    fn amqplib_call(&mut self, p: usize, last: &str) {
        let args = self.t.args(p);
        let line = self.line(p);
        let (role, pick, exchange) = match (last, args.as_slice()) {
            ("publish", [ex, key, ..]) => {
                let k = eval(self.t, *key, &ExprRules::JS, self.asg);
                let key = (k.as_lit() != Some("")).then_some(*key);
                (EventRole::Producer, key, Some(*ex))
            }
            ("sendToQueue", [q, ..]) => (EventRole::Producer, Some(*q), None),
            ("consume", [q, ..]) => (EventRole::Consumer, Some(*q), None),
            ("bindQueue", [_, ex, ..]) => (EventRole::Consumer, None, Some(*ex)),
            _ => return,
        };
        if let Some(pick) = pick
            && let Some(topic) = self.topic_expr(pick.0, pick.1)
        {
            self.facts.events.push(EventFact {
                role,
                topic,
                via: "amqplib".to_string(),
                line,
            });
        }
        if let Some(ex) = exchange
            && let Some(topic) = self.topic_expr(ex.0, ex.1)
        {
            common::push_exchange(&mut self.facts, role, topic, line);
        }
    }

    /// `server.addService(proto.orders.OrderService.service, { createOrder: h, getOrder })`.
    fn add_service(&mut self, p: usize) {
        let t = self.t;
        let args = t.args(p);
        if args.len() < 2 {
            return;
        }
        let (a, e) = args[0];
        let mut segs: Vec<&str> = Vec::new();
        let mut k = a;
        while k < e {
            if let Some(id) = t.ident(k) {
                segs.push(id);
            } else if !t.is(k, ".") {
                return;
            }
            k += 1;
        }
        let service = match segs.as_slice() {
            [.., svc, "service"] => svc.to_string(),
            [.., last] => service_of_definition(last),
            [] => return,
        };
        let (ha, _) = args[1];
        let impl_type = if t.is(ha, "new") {
            let mut k = ha + 1;
            let mut last = None;
            while let Some(id) = t.ident(k) {
                last = Some(id);
                if !t.is(k + 1, ".") {
                    break;
                }
                k += 2;
            }
            last.map(str::to_string)
        } else {
            None
        };
        let line = self.line(p);
        self.facts.grpc.push(GrpcFact::Server {
            service: service.clone(),
            impl_type,
            line,
        });
        if t.is(ha, "{") {
            for (ka, ke) in t.args(ha) {
                let mut k = ka;
                if matches!(t.ident(k), Some("async" | "get" | "set"))
                    && (t.ident(k + 1).is_some() || t.is(k + 1, "*"))
                {
                    k += 1;
                }
                if t.is(k, "*") {
                    k += 1;
                }
                if k >= ke {
                    continue;
                }
                let Some(method) = t.ident(k).or_else(|| t.str_lit(k).map(|s| s.raw)) else {
                    continue;
                };
                // The handler is where its function is written when this file declares it
                // (`{ convert }`, `charge: Server.ChargeHandler.bind(this)`), else the entry.
                let value = if t.is(k + 1, ":") {
                    handler_name_of(t, k + 2, ke)
                } else {
                    Some(method)
                };
                let declared = value.and_then(|v| {
                    self.facts.symbols.iter().find(|s| {
                        s.name == v
                            && matches!(
                                s.kind,
                                crate::index::facts::SymbolKind::Function
                                    | crate::index::facts::SymbolKind::Method
                            )
                    })
                });
                let line = declared.map_or_else(|| self.line(k), |s| s.line);
                self.facts.grpc.push(GrpcFact::Handler {
                    service: service.clone(),
                    method: method.to_string(),
                    line,
                });
            }
        }
    }
}

/// The function a handler map's value names: the last name of `a.b.c`, with a trailing
/// `.bind(…)` dropped (`Server.ChargeHandler.bind(this)` gives `ChargeHandler`); `None` for a
/// function literal or anything else.
fn handler_name_of<'a>(t: &Tokens<'_, 'a>, s: usize, e: usize) -> Option<&'a str> {
    let mut last = None;
    let mut k = s;
    while k < e {
        let id = t.ident(k)?;
        if id == "bind" && last.is_some() && t.is(k + 1, "(") {
            return last;
        }
        last = Some(id);
        if t.is(k + 1, ".") {
            k += 2;
        } else {
            return (k + 1 == e).then_some(id);
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use crate::index::facts::{EventRole, GrpcFact};
    use crate::index::lang::test_support::topics_shown;

    #[test]
    fn a_mapped_grpc_handler_is_where_its_function_is_written() {
        let src = "const grpc = require('@grpc/grpc-js');\nclass Shop {\n  static ChargeHandler (call, cb) {\n    cb(null, {});\n  }\n  load () {\n    this.server.addService(pkg.PaymentService.service, {\n      charge: Shop.ChargeHandler.bind(this),\n      refund: (call, cb) => cb(null, {}),\n    });\n  }\n}\n";
        let f = extract("server.js", src);
        let lines: Vec<(String, u32)> = f
            .grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Handler { method, line, .. } => Some((method.clone(), *line)),
                _ => None,
            })
            .collect();
        assert_eq!(lines, vec![("charge".into(), 3), ("refund".into(), 9)]);
    }

    #[test]
    fn grpc_js_servers_clients_and_calls() {
        let src = r#"const server = new grpc.Server();
server.addService(ordersProto.orders.OrderService.service, {
  createOrder: createOrderHandler,
  getOrder,
  async listOrders(call) {},
  ...extra,
});
server.addService(services.PaymentServiceService, new PaymentImpl());
const client = new ordersProto.OrderService('localhost:50051', grpc.credentials.createInsecure());
client.getOrder({ id: 1 }, (err, res) => {});
client.close();
const stub = new InventoryServiceClient(addr, creds);
stub.reserve(req);
other.reserve(req);
const fmt = new Intl.NumberFormat('en');
"#;
        let f = extract("src/server.js", src);
        let plain = extract(
            "src/s.js",
            "const client = new SocksClient(opts);\nclient.connect();\nclass A { constructor(private s: CAClient) {} }\n",
        );
        assert!(plain.grpc.is_empty());
        let connect = extract(
            "src/c.ts",
            "const eliza = createPromiseClient(ElizaService, transport);\nawait eliza.say({});\nconst redis = createClient({ url });\n",
        );
        assert_eq!(
            connect.grpc,
            vec![
                GrpcFact::Client {
                    service: "ElizaService".into(),
                    var: Some("eliza".into()),
                    line: 1
                },
                GrpcFact::Call {
                    service: Some("ElizaService".into()),
                    receiver: "eliza".into(),
                    method: "say".into(),
                    line: 2
                },
            ]
        );
        let handler = |method: &str, line| GrpcFact::Handler {
            service: "OrderService".into(),
            method: method.into(),
            line,
        };
        assert_eq!(
            f.grpc,
            vec![
                GrpcFact::Server {
                    service: "OrderService".into(),
                    impl_type: None,
                    line: 2
                },
                handler("createOrder", 3),
                handler("getOrder", 4),
                handler("listOrders", 5),
                GrpcFact::Server {
                    service: "PaymentService".into(),
                    impl_type: Some("PaymentImpl".into()),
                    line: 8
                },
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("client".into()),
                    line: 9
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "client".into(),
                    method: "getOrder".into(),
                    line: 10
                },
                GrpcFact::Client {
                    service: "InventoryService".into(),
                    var: Some("stub".into()),
                    line: 12
                },
                GrpcFact::Call {
                    service: Some("InventoryService".into()),
                    receiver: "stub".into(),
                    method: "reserve".into(),
                    line: 13
                },
            ]
        );
    }

    #[test]
    fn amqplib_publish_send_to_queue_and_consume() {
        let src = r#"const ch = await conn.createChannel();
ch.publish('orders', 'order.created', Buffer.from(x));
ch.publish(EXCHANGE, '', Buffer.from(x));
channel.sendToQueue(process.env.QUEUE || 'payments', msg);
channel.consume('orders', onMessage);
emitter.publish('not.amqp', x);
ch.publish('', 'jobs', Buffer.from(x));
await ch.bindQueue(q.queue, 'évènements', 'order.*');
ch.bindQueue(q.queue, '', 'x');
emitter.bindQueue('q', 'not.amqp', 'x');
"#;
        let f = extract("src/bus.js", src);
        let got: Vec<_> = f
            .events
            .iter()
            .map(|e| (e.role, e.topic.display(), e.via.as_str(), e.line))
            .collect();
        use EventRole::{Consumer, Producer};
        let ex = crate::index::lang::common::AMQP_EXCHANGE_VIA;
        assert_eq!(
            got,
            vec![
                // The routing key, and the exchange as an endpoint of its own.
                (Producer, "order.created".to_string(), "amqplib", 2),
                (Producer, "orders".to_string(), ex, 2),
                // An empty routing key: the exchange only.
                (Producer, "{EXCHANGE}".to_string(), ex, 3),
                (Producer, "{env QUEUE}".to_string(), "amqplib", 4),
                (Consumer, "orders".to_string(), "amqplib", 5),
                // The default exchange is no endpoint.
                (Producer, "jobs".to_string(), "amqplib", 7),
                // A queue bound to an exchange consumes it.
                (Consumer, "évènements".to_string(), ex, 8),
            ]
        );
        // Not on a channel: someone else's method.
        let other = "queue.bindQueue('q', 'orders', 'k');\nbus.publish('orders', 'k', x);\n";
        assert!(topics_shown(&extract("src/other.js", other)).is_empty());
    }

    #[test]
    fn nest_swagger_ui_is_a_route() {
        let src = "async function bootstrap() {\n  const app = await NestFactory.create(AppModule);\n  SwaggerModule.setup('api', app, document);\n  other.setup('x', app);\n}\n";
        let f = extract("src/main.ts", src);
        assert_eq!(
            routes(&f),
            vec![(
                "GET".into(),
                "/api".into(),
                Some("SwaggerModule.setup".into()),
                3
            )]
        );
    }
}
