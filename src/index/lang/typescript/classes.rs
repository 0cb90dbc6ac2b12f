//! Pass 2, classes: a class declaration and its body (methods, fields, static constants), with
//! what its decorators and `implements` clause say — NestJS controllers and routes, gRPC servers
//! and handlers, event consumers.

use super::{ClassCtx, Declares, Deco, Ex, Region, Site};
use crate::index::facts::{EventFact, EventRole, GrpcFact, HttpFact, SymbolKind};
use crate::index::lang::common::join_route;
use crate::index::lang::tokens::TokKind;

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn class_decl(
        &mut self,
        kw: usize,
        default: bool,
        site: Site,
        decos: &[Deco<'t>],
        work: &mut Vec<Region>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let name_idx = t
            .ident(kw + 1)
            .filter(|n| !matches!(*n, "extends" | "implements"))
            .map(|_| kw + 1);
        let name = match name_idx {
            Some(k) => t.text(k).to_string(),
            None if default => "default".to_string(),
            None => return self.stmt_next(kw, b),
        };
        let mut j = name_idx.map_or(kw + 1, |k| k + 1);
        let mut angle = 0usize;
        let mut in_implements = false;
        let mut body = None;
        while j < b {
            if t.is(j, "{") {
                if angle == 0 {
                    body = Some(j);
                    break;
                }
                j = t.skip_group(j);
                continue;
            }
            if t.is(j, ";") || t.is(j, "}") {
                break;
            }
            if t.is(j, "<") {
                angle += 1;
            } else if t.is(j, ">") {
                angle = angle.saturating_sub(1);
            } else if t.is(j, "implements") {
                in_implements = true;
            } else if t.is(j, "extends") {
                in_implements = false;
            } else if t.is(j, "(") || t.is(j, "[") {
                j = t.skip_group(j);
                continue;
            } else if in_implements
                && angle == 0
                && let Some(id) = t.ident(j)
                && !t.is(j + 1, ".")
            {
                self.implemented_server(id, &name, name_idx.unwrap_or(kw));
            }
            j += 1;
        }
        let name_tok = name_idx.unwrap_or(kw);
        let end_line = body.map_or(self.line(j.min(b).saturating_sub(1)), |o| {
            self.close_line(o)
        });
        self.declare(site, &name, SymbolKind::Class, name_tok, end_line);
        let mut route_prefix = None;
        for d in decos {
            match d.name {
                "Controller" | "JsonController" | "Route" => {
                    route_prefix = Some(self.decorator_path(d).unwrap_or_default());
                }
                n if n.len() > "ControllerMethods".len() && n.ends_with("ControllerMethods") => {
                    // ts-proto's `@OrderServiceControllerMethods()` binds every method.
                    let service = n.trim_end_matches("ControllerMethods").to_string();
                    self.facts.grpc.push(GrpcFact::Server {
                        service,
                        impl_type: Some(name.clone()),
                        line: d.line,
                    });
                }
                _ => {}
            }
        }
        match body {
            Some(o) => {
                let class = Some(ClassCtx {
                    name: name.clone(),
                    route_prefix,
                });
                let body = Region::body(t, o, b, Some(name), class);
                let end = body.b;
                work.push(body);
                end + 1
            }
            None => self.stmt_next(j.max(kw + 1), b),
        }
    }

    /// `implements IOrderServiceServer` (grpc-js static codegen) or `implements
    /// OrderServiceController` (ts-proto NestJS): the class serves that service.
    fn implemented_server(&mut self, iface: &str, class: &str, at: usize) {
        let stem = iface
            .strip_suffix("Server")
            .map(|s| match s.strip_prefix('I') {
                Some(rest) if rest.starts_with(|c: char| c.is_ascii_uppercase()) => rest,
                _ => s,
            })
            .or_else(|| iface.strip_suffix("Controller"));
        if let Some(stem) = stem
            && stem.len() > 1
            && stem.starts_with(|c: char| c.is_ascii_uppercase())
        {
            let line = self.line(at);
            self.facts.grpc.push(GrpcFact::Server {
                service: stem.to_string(),
                impl_type: Some(class.to_string()),
                line,
            });
        }
    }

    /// The path argument of a route decorator: `'orders'`, `['a', 'b']` (the first),
    /// `{ path: 'orders' }`; `None` when it has none.
    fn decorator_path(&self, d: &Deco) -> Option<String> {
        let t = self.t;
        let (a, _) = *t.args(d.open?).first()?;
        let at = if t.is(a, "[") {
            a + 1
        } else if t.is(a, "{") {
            self.object_value(a, "path")?
        } else {
            a
        };
        t.str_value(at).map(|s| s.into_owned())
    }

    /// True when the modifier-like word at `i` is used as a modifier (a member name follows).
    fn is_modifier(&self, i: usize) -> bool {
        let t = self.t;
        t.line(i + 1) == t.line(i)
            && (t.ident(i + 1).is_some()
                || t.is(i + 1, "*")
                || t.is(i + 1, "#")
                || t.is(i + 1, "[")
                || t.str_lit(i + 1).is_some())
    }

    pub(super) fn class_body(&mut self, r: Region) {
        let t = self.t;
        let b = r.b;
        let Some(ctx) = r.class else {
            return;
        };
        let cname = ctx.name.clone();
        let mut i = r.a;
        while i < b {
            let (j, attr_line, decos) = self.decorators(i, b);
            let member = Site::new(self.t, Some(&cname), attr_line);
            i = j;
            if i >= b {
                break;
            }
            if t.is(i, ";") || t.is(i, ",") {
                i += 1;
                continue;
            }
            if t.is(i, "static") && t.is(i + 1, "{") {
                i = t.skip_group(i + 1);
                continue;
            }
            let mut is_static = false;
            let mut is_readonly = false;
            while let Some(
                m @ ("public" | "private" | "protected" | "static" | "readonly" | "abstract"
                | "async" | "override" | "declare" | "accessor" | "get" | "set"),
            ) = t.ident(i)
            {
                if !self.is_modifier(i) {
                    break;
                }
                is_static |= m == "static";
                is_readonly |= m == "readonly";
                i += 1;
            }
            if t.is(i, "*") {
                i += 1;
            }
            if t.is(i, "#") {
                i += 1;
            }
            let name_idx = i;
            let name: Option<&'t str> = t.ident(i).or_else(|| t.str_lit(i).map(|s| s.raw));
            if t.is(i, "[") {
                i = t.skip_group(i);
            } else if name.is_some() || t.kind(i) == Some(TokKind::Num) {
                i += 1;
            } else {
                i = self.stmt_next(i, b);
                continue;
            }
            if t.is(i, "?") || t.is(i, "!") {
                i += 1;
            }
            i = self.t.skip_angles(i, b);
            if t.is(i, "(") {
                let (end_line, next) = self.signature_end(i, b);
                if let Some(name) = name {
                    let kind = if name == "constructor" {
                        SymbolKind::Constructor
                    } else {
                        SymbolKind::Method
                    };
                    self.declare(member, name, kind, name_idx, end_line);
                    self.member_decorators(&decos, name, name_idx, &ctx);
                }
                i = next.max(name_idx + 1);
                continue;
            }
            let e = self.expr_end(i, b, false);
            if let Some(name) = name {
                let eq = if t.is(i, "=") {
                    Some(i)
                } else {
                    t.find_at_depth0(i, e, "=")
                };
                if let Some(eq) = eq {
                    let v = eq + 1;
                    if let Some(end_line) = self.function_value(v, e) {
                        self.declare(member, name, SymbolKind::Method, name_idx, end_line);
                        self.member_decorators(&decos, name, name_idx, &ctx);
                    } else if (is_static || is_readonly)
                        && let Some(s) = t.str_lit(v)
                        && (e == v + 1 || (e == v + 3 && t.is(v + 1, "as")))
                        && !(t.text(v).starts_with('`') && s.raw.contains("${"))
                    {
                        let line = self.line(v);
                        self.push_constant(format!("{cname}.{name}"), s.value().into_owned(), line);
                    }
                }
            }
            i = (if t.is(e, ";") { e + 1 } else { e }).max(name_idx + 1);
        }
    }

    /// A decorator argument naming a service or method: a literal, a file constant, or the
    /// last segment of a reference (`Services.Orders` gives `Orders`).
    fn name_arg(&self, a: usize, e: usize) -> Option<String> {
        let t = self.t;
        if let Some(s) = t.str_value(a) {
            return Some(s.into_owned());
        }
        t.ident(a)?;
        let mut full = String::new();
        let mut k = a;
        while k < e {
            if let Some(id) = t.ident(k) {
                full.push_str(id);
            } else if t.is(k, ".") {
                full.push('.');
            } else {
                break;
            }
            k += 1;
        }
        if let Some(v) = self.consts.get(&full) {
            return Some(v.clone());
        }
        full.rsplit('.').next().map(str::to_string)
    }

    /// NestJS member decorators: gRPC handlers, event consumers and routes.
    fn member_decorators(&mut self, decos: &[Deco], method: &str, name_idx: usize, ctx: &ClassCtx) {
        let t = self.t;
        for d in decos {
            match d.name {
                "GrpcMethod" | "GrpcStreamMethod" | "GrpcStreamCall" => {
                    let args = d.open.map(|o| t.args(o)).unwrap_or_default();
                    let service = args
                        .first()
                        .and_then(|&(a, e)| self.name_arg(a, e))
                        .unwrap_or_else(|| ctx.name.clone());
                    let method = args
                        .get(1)
                        .and_then(|&(a, e)| self.name_arg(a, e))
                        .unwrap_or_else(|| upper_first(method));
                    let line = self.line(name_idx);
                    self.facts.grpc.push(GrpcFact::Handler {
                        service,
                        method,
                        line,
                    });
                }
                via @ ("EventPattern" | "MessagePattern") => {
                    let Some(&(a, e)) = d.open.and_then(|o| t.args(o).first().copied()).as_ref()
                    else {
                        continue;
                    };
                    let exprs: Vec<(usize, usize)> = if t.is(a, "[") {
                        t.args(a)
                    } else {
                        vec![(a, e)]
                    };
                    for (x, y) in exprs {
                        if let Some(topic) = self.topic_expr(x, y) {
                            self.facts.events.push(EventFact {
                                role: EventRole::Consumer,
                                topic,
                                via: format!("@{via}"),
                                line: d.line,
                            });
                        }
                    }
                }
                verb @ ("Get" | "Post" | "Put" | "Delete" | "Patch" | "Options" | "Head"
                | "All") => {
                    let sub = self.decorator_path(d).unwrap_or_default();
                    let prefix = ctx.route_prefix.as_deref().unwrap_or("");
                    let http_method = if verb == "All" {
                        "ANY".to_string()
                    } else {
                        verb.to_ascii_uppercase()
                    };
                    self.facts.http.push(HttpFact::Route {
                        method: http_method,
                        path: join_route(prefix, &sub),
                        handler: Some(method.to_string()),
                        line: d.line,
                    });
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use crate::index::facts::{EventRole, GrpcFact, SymbolKind};

    #[test]
    fn classes_methods_and_containers() {
        let f = extract("src/order.service.ts", CLASSES);
        let c = sym(&f, "OrderService");
        assert_eq!(c.kind, SymbolKind::Class);
        assert_eq!((c.line, c.end_line, c.doc_line), (6, 33, Some(1)));
        let ctor = sym(&f, "constructor");
        assert_eq!(ctor.kind, SymbolKind::Constructor);
        assert_eq!((ctor.line, ctor.end_line), (13, 15));
        assert_eq!(ctor.container.as_deref(), Some("OrderService"));
        let create = sym(&f, "create");
        assert_eq!(create.kind, SymbolKind::Method);
        assert_eq!(
            (create.line, create.end_line, create.doc_line),
            (18, 23, Some(17))
        );
        assert_eq!(sym(&f, "size").kind, SymbolKind::Method);
        assert_eq!(sym(&f, "ids").line, 26);
        let validate = sym(&f, "validate");
        assert_eq!((validate.line, validate.end_line), (27, 27));
        let on_event = sym(&f, "onEvent");
        assert_eq!((on_event.kind, on_event.end_line), (SymbolKind::Method, 30));
        assert_eq!(constant(&f, "OrderService.TOPIC"), Some("order.static"));
        // Fields are not symbols; local classes inside method bodies are not scanned.
        assert!(!has_sym(&f, "cache"));
        assert!(!has_sym(&f, "Local"));
        assert!(!has_sym(&f, "local"));
        assert_eq!(sym(&f, "method").container.as_deref(), Some("Outer"));
    }

    #[test]
    fn nestjs_controllers_grpc_methods_and_events() {
        let f = extract("src/orders.controller.ts", NEST);
        assert_eq!(
            routes(&f),
            vec![
                (
                    "GET".into(),
                    "/orders/:id".into(),
                    Some("getOne".into()),
                    14
                ),
                ("POST".into(), "/orders".into(), Some("create".into()), 19),
            ]
        );
        let handlers: Vec<(String, String, u32)> = f
            .grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Handler {
                    service,
                    method,
                    line,
                } => Some((service.clone(), method.clone(), *line)),
                _ => None,
            })
            .collect();
        assert_eq!(
            handlers,
            vec![
                ("OrderService".into(), "CreateOrder".into(), 32),
                ("OrderService".into(), "GetOrder".into(), 37),
                ("OrdersGrpc".into(), "ListOrders".into(), 40),
            ]
        );
        assert!(f.grpc.contains(&GrpcFact::Server {
            service: "OrderService".into(),
            impl_type: Some("OrdersGrpc".into()),
            line: 29
        }));
        assert!(f.grpc.contains(&GrpcFact::Client {
            service: "OrderService".into(),
            var: Some("orderService".into()),
            line: 3
        }));
        assert!(f.grpc.contains(&GrpcFact::Client {
            service: "PaymentService".into(),
            var: Some("payments".into()),
            line: 7
        }));
        assert!(f.grpc.contains(&GrpcFact::Call {
            service: Some("OrderService".into()),
            receiver: "orderService".into(),
            method: "getOrder".into(),
            line: 16
        }));
        assert!(f.grpc.contains(&GrpcFact::Call {
            service: Some("PaymentService".into()),
            receiver: "payments".into(),
            method: "charge".into(),
            line: 22
        }));
        // `getService` itself is plumbing, never an RPC call.
        assert!(
            !f.grpc
                .iter()
                .any(|g| matches!(g, GrpcFact::Call { method, .. } if method == "getService"))
        );
        assert_eq!(
            events(&f),
            vec![
                (
                    EventRole::Producer,
                    reference("Topics.ORDER_CREATED"),
                    "ClientKafka".into(),
                    23
                ),
                (
                    EventRole::Producer,
                    lit("orders.reply"),
                    "ClientKafka".into(),
                    24
                ),
                (
                    EventRole::Consumer,
                    lit("order.created"),
                    "@EventPattern".into(),
                    42
                ),
                (
                    EventRole::Consumer,
                    reference("TOPICS.ORDER_PAID"),
                    "@MessagePattern".into(),
                    45
                ),
            ]
        );
        assert_eq!(sym(&f, "getOne").doc_line, Some(14));
        assert_eq!(sym(&f, "create").doc_line, Some(19));
        assert_eq!(sym(&f, "OrdersGrpc").doc_line, Some(28));
    }
}
