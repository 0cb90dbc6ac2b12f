//! The call pass: every call site `name(` once, turned into gRPC calls, Kafka events and HTTP
//! calls on the names the bindings pass recorded, and the routes of routers and apps.

use super::bindings::{consumer_via, producer_via, receiver_key, stub_of, stub_service};
use super::*;

/// The receiver chain of a call: `self.stub` in `self.stub.CreateOrder(`, `httpx.AsyncClient()`
/// in `httpx.AsyncClient().get(`.
#[derive(Default)]
pub(super) struct Chain<'c> {
    /// The chain as written (masked), empty for a bare call.
    text: &'c str,
    start: usize,
    /// The callee of a call the chain ends with (`AsyncClient` above).
    ends_with_call: Option<&'c str>,
}

impl Chain<'_> {
    /// The binding key: the chain without `self.`, when it is a plain dotted name.
    pub(super) fn key(&self) -> Option<&str> {
        let k = receiver_key(self.text);
        (!k.is_empty() && k.bytes().all(|b| is_ident_byte(b) || b == b'.')).then_some(k)
    }

    pub(super) fn root(&self) -> &str {
        self.text.split('.').next().unwrap_or("")
    }

    /// The last segment of the chain (`stub` in `self.stub`).
    pub(super) fn last(&self) -> &str {
        self.text.rsplit('.').next().unwrap_or("")
    }
}

/// A call site: `callee(…)` after the receiver `chain`, its parentheses at `open..close`; what
/// each step of [`call_site`] reads.
#[derive(Clone, Copy)]
struct Call<'a, 'c> {
    chain: &'a Chain<'c>,
    callee: &'a str,
    open: usize,
    close: usize,
}

/// The receiver chain ending at the `.` at `dot`.
pub(super) fn chain_before<'c>(code: &'c str, br: &Brackets, dot: usize) -> Chain<'c> {
    let b = code.as_bytes();
    let mut start = dot;
    let mut ends_with_call = None;
    let mut p = dot;
    for step in 0..16 {
        let Some((s, called)) = common::segment_before(code, br, p) else {
            break;
        };
        if step == 0 {
            ends_with_call = called;
        }
        start = s;
        if start > 0 && b[start - 1] == b'.' {
            p = start - 1;
        } else {
            break;
        }
    }
    Chain {
        text: &code[start..dot],
        start,
        ends_with_call,
    }
}

/// Pass two: every call site `name(`.
pub(super) fn calls(src: &Src, st: &mut State) {
    let code = src.code();
    let b = code.as_bytes();
    for (open, _) in code.match_indices('(') {
        let Some((cs, callee)) = ident_before(code, open) else {
            continue;
        };
        if matches!(ident_before(code, cs), Some((_, "def" | "class"))) {
            continue;
        }
        let Some(close) = src.br.close_of(open) else {
            continue;
        };
        let chain = if cs > 0 && b[cs - 1] == b'.' {
            chain_before(code, &src.br, cs - 1)
        } else {
            Chain {
                start: cs,
                ..Chain::default()
            }
        };
        // Decorators were read in pass one.
        if lex::prev_non_space(code, chain.start).is_some_and(|(_, c)| c == b'@') {
            continue;
        }
        call_site(src, st, &chain, callee, open, close);
    }
}

/// A call `callee(…)` with parentheses `open..close` after the receiver `chain`: gRPC, Kafka,
/// AMQP, router and HTTP calls, each read by its own step.
pub(super) fn call_site(
    src: &Src,
    st: &mut State,
    chain: &Chain,
    callee: &str,
    open: usize,
    close: usize,
) {
    let call = Call {
        chain,
        callee,
        open,
        close,
    };
    if grpc_call(src, st, &call) {
        return;
    }
    if let Some(via) = consumer_via(st, callee).filter(|v| *v != "confluent-kafka") {
        // `KafkaConsumer("a", "b", …)`, `AIOKafkaConsumer("t", …)`: leading positional topics.
        let args = src.args(open, close);
        for &(s, e) in &args.positional {
            push_topics(src, st, EventRole::Consumer, via, s, e);
        }
        return;
    }
    if pubsub_call(src, st, &call) {
        return;
    }
    match callee {
        "subscribe" | "produce" | "send" | "send_and_wait" | "produce_async" => {
            kafka_call(src, st, &call)
        }
        "basic_publish" | "basic_consume" | "queue_bind" => amqp_call(src, st, &call),
        "send_message" | "send_message_batch" | "receive_message" | "publish" | "publish_batch" => {
            aws_call(src, st, &call)
        }
        "include_router" | "register_blueprint" | "add_url_rule" => router_call(src, st, &call),
        "path" | "re_path" | "url" if st.django_urls && chain.text.is_empty() => {
            django_pattern(src, st, &call)
        }
        "get" | "post" | "put" | "delete" | "patch" | "head" | "options" | "request" | "stream"
        | "fetch" | "urlopen" => http_call(src, st, &call),
        _ => {}
    }
}

/// gRPC: calls on a stub (bound to a name, or built in the call expression), `future` /
/// `with_call` forms, `add_XServicer_to_server` servers and stub constructions. True when the
/// call was one.
fn grpc_call(src: &Src, st: &mut State, call: &Call) -> bool {
    let (chain, callee, open, close) = (call.chain, call.callee, call.open, call.close);
    let line = src.line_of(open);
    // gRPC calls on a name bound to a stub: `self.stub.CreateOrder(req)`, `stub.GetOrder(r)`.
    // Every stub method takes a request: a call without arguments (`resp.GetOffers()` on a
    // response) is a getter, never an RPC.
    let has_args = src.code()[open + 1..close].trim() != "";
    if !st.stubs.is_empty()
        && has_args
        && let Some(key) = chain.key()
        && !key.contains('.')
        && let Some(svc) = stub_of(st, chain.text, line)
    {
        st.facts
            .push_grpc_call(svc, key.to_string(), callee.to_string(), line);
        return true;
    }
    // A stub built in the call expression: `OffersStub(channel).GetOffers(req)`.
    if st.grpc_file
        && has_args
        && let Some(svc) = chain
            .ends_with_call
            .and_then(|c| stub_service(c.rsplit('.').next().unwrap_or(c)))
    {
        st.facts.push_grpc_call(
            svc.to_string(),
            format!("{}(…)", chain.ends_with_call.unwrap_or_default()),
            callee.to_string(),
            line,
        );
        return true;
    }
    // `stub.CreateOrder.future(req)`, `self.stub.GetOrder.with_call(req)`.
    if matches!(callee, "future" | "with_call")
        && let Some((recv, method)) = chain.text.rsplit_once('.')
        && let Some(svc) = stub_of(st, recv, line)
    {
        st.facts.push_grpc_call(
            svc,
            receiver_key(recv).to_string(),
            method.to_string(),
            line,
        );
        return true;
    }
    if let Some(svc) = callee
        .strip_prefix("add_")
        .and_then(|c| c.strip_suffix("Servicer_to_server"))
        .filter(|s| !s.is_empty())
    {
        let args = src.args(open, close);
        // The implementing classes: a construction in place, or every class the registered
        // name was built from (a real and a dummy servicer chosen at run time); none known
        // leaves the type open.
        let impl_types: Vec<Option<String>> = match args.positional.first() {
            Some(&(s, e)) => match src.call(s, e) {
                Some((c, _, _)) => vec![Some(c.rsplit('.').next().unwrap_or(c).to_string())],
                None => src
                    .dotted(s, e)
                    .and_then(|name| st.instances.get(receiver_key(name)))
                    .map(|classes| classes.iter().cloned().map(Some).collect())
                    .unwrap_or_default(),
            },
            None => Vec::new(),
        };
        let impl_types = if impl_types.is_empty() {
            vec![None]
        } else {
            impl_types
        };
        for impl_type in impl_types {
            st.facts.grpc.push(GrpcFact::Server {
                service: svc.to_string(),
                impl_type,
                line,
            });
        }
        return true;
    }
    if st.grpc_file
        && let Some(svc) = stub_service(callee)
        && !st.bound_stubs.contains(&open)
    {
        st.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: None,
            line,
        });
        return true;
    }
    false
}

/// Kafka consumer subscriptions and producer sends on a known or Kafka-named receiver.
fn kafka_call(src: &Src, st: &mut State, call: &Call) {
    let (chain, callee, open, close) = (call.chain, call.callee, call.open, call.close);
    match callee {
        "subscribe" => {
            let Some(via) = kafka_receiver(st, chain, false) else {
                return;
            };
            let args = src.args(open, close);
            if let Some((s, e)) = args
                .positional
                .first()
                .copied()
                .or_else(|| args.kw("topics"))
            {
                for (a, z) in src.elements(s, e) {
                    push_topics(src, st, EventRole::Consumer, via, a, z);
                }
            }
        }
        "produce" | "send" | "send_and_wait" | "produce_async" => {
            let Some(via) = kafka_receiver(st, chain, true) else {
                return;
            };
            let args = src.args(open, close);
            if let Some((s, e)) = args
                .kw("topic")
                .or_else(|| args.positional.first().copied())
            {
                push_topics(src, st, EventRole::Producer, via, s, e);
            }
        }
        _ => {}
    }
}

/// nats-py (`await nc.publish("orders.created", b"…")`, `await nc.subscribe("orders.*",
/// cb=h)`, JetStream's `js.publish` / `js.subscribe` / `js.pull_subscribe`) and redis-py
/// (`r.publish(ch, msg)`, `p = r.pubsub(); p.subscribe("a", "b")`, `p.psubscribe("a.*")`,
/// `r.xadd("s", {…})`, `r.xreadgroup("g", "c", {"s": ">"})`) in a file that imports the
/// library. A Kafka consumer's `subscribe` and an SNS `publish(TopicArn=…)` stay theirs.
/// True when the call was one.
fn pubsub_call(src: &Src, st: &mut State, call: &Call) -> bool {
    let (chain, callee, open, close) = (call.chain, call.callee, call.open, call.close);
    if chain.text.is_empty() {
        return false;
    }
    let Some(lib) = common::PubSub::for_receiver(st.pubsub, chain.last()) else {
        return false;
    };
    let Some((role, stream)) = common::pubsub_method(lib, callee) else {
        return false;
    };
    let producer = role == EventRole::Producer;
    if kafka_receiver(st, chain, producer).is_some() && st.kafka_lib.is_some() {
        return false;
    }
    let args = src.args(open, close);
    if args.kw("TopicArn").is_some() || args.kw("TargetArn").is_some() {
        return false;
    }
    let via = lib.via();
    let mut found: Vec<(usize, usize)> = Vec::new();
    if stream && !producer {
        // `xreadgroup(group, consumer, {stream: id})` / `streams={…}`: the dict's keys.
        if let Some((s, e)) = args
            .kw("streams")
            .or_else(|| args.positional.get(2).copied())
        {
            for (a, z) in src.elements(s, e) {
                if let Some(&(ks, ke)) = common::split_top(src.code(), a, z, b':', &src.br).first()
                {
                    found.push((ks, ke));
                }
            }
        }
    } else if let Some(first) = args.first_or(&["subject", "channel", "name"]) {
        found.push(first);
        // redis-py subscribes to every positional channel.
        if lib == common::PubSub::Redis && !producer && !stream {
            found.extend(args.positional.iter().skip(1));
        }
    }
    for (s, e) in found {
        push_topics(src, st, role, via, s, e);
    }
    true
}

/// AMQP (pika, kombu, aio-pika) publishes, consumes and queue bindings.
fn amqp_call(src: &Src, st: &mut State, call: &Call) {
    let (callee, open, close) = (call.callee, call.open, call.close);
    let line = src.line_of(open);
    let args = src.args(open, close);
    match callee {
        // `basic_publish(exchange=…, routing_key=…)` sends to the routing key and produces
        // to the exchange (the default exchange `''` is none); one fact each, on the
        // call's line.
        "basic_publish" => {
            let key = args
                .kw("routing_key")
                .or_else(|| args.positional.get(1).copied());
            let exchange = args
                .kw("exchange")
                .or_else(|| args.positional.first().copied());
            if let Some((s, e)) = key
                && src.value(s, e).as_lit() != Some("")
                && let Some(topic) = src.topic(s, e)
            {
                common::push_event(&mut st.facts, EventRole::Producer, topic, "amqp", line);
            }
            if let Some((s, e)) = exchange
                && let Some(ex) = src.topic(s, e)
            {
                common::push_exchange(&mut st.facts, EventRole::Producer, ex, line);
            }
        }
        // `basic_consume(queue=…)` consumes the queue.
        "basic_consume" => {
            if let Some((s, e)) = args
                .kw("queue")
                .or_else(|| args.positional.first().copied())
                && let Some(topic) = src.topic(s, e)
            {
                common::push_event(&mut st.facts, EventRole::Consumer, topic, "amqp", line);
            }
        }
        // `queue_bind(queue, exchange, routing_key=…)`: the queue's consumer receives what
        // is published to the exchange.
        "queue_bind" => {
            if let Some((s, e)) = args
                .kw("exchange")
                .or_else(|| args.positional.get(1).copied())
                && let Some(ex) = src.topic(s, e)
            {
                common::push_exchange(&mut st.facts, EventRole::Consumer, ex, line);
            }
        }
        _ => {}
    }
}

/// boto3 SQS and SNS: `sqs.send_message(QueueUrl=url, MessageBody=…)`,
/// `receive_message(QueueUrl=url)`, `sns.publish(TopicArn=arn, Message=…)`; the address
/// names the queue or topic. A queue resource's `queue.send_message(MessageBody=…)` names
/// none in the call and is kept as a site the graph lists as unresolved. The keyword
/// arguments are AWS's own, which tells these from other `publish` calls.
fn aws_call(src: &Src, st: &mut State, call: &Call) {
    let (callee, open, close) = (call.callee, call.open, call.close);
    let Some((role, via, keys)) = common::aws_sdk_method(callee) else {
        return;
    };
    let args = src.args(open, close);
    let address = keys.iter().find_map(|k| args.kw(k));
    let topic = match address {
        Some((s, e)) => common::topic_of(common::aws_destination(src.value(s, e))),
        None if via == "SQS"
            && (args.kw("MessageBody").is_some() || args.kw("Entries").is_some()) =>
        {
            Some(Value::dynamic())
        }
        None => None,
    };
    if let Some(topic) = topic {
        common::push_event(&mut st.facts, role, topic, via, src.line_of(open));
    }
}

/// Routers mounted under a prefix (FastAPI `include_router`, Flask `register_blueprint`) and
/// Flask `add_url_rule` routes.
fn router_call(src: &Src, st: &mut State, call: &Call) {
    let (chain, callee, open, close) = (call.chain, call.callee, call.open, call.close);
    let line = src.line_of(open);
    match callee {
        "include_router" | "register_blueprint" => {
            let args = src.args(open, close);
            let prefix = args
                .kw("prefix")
                .or_else(|| args.kw("url_prefix"))
                .and_then(|(s, e)| src.plain_string(s, e));
            if let (Some(prefix), Some(&(s, e))) = (prefix, args.positional.first())
                && let Some(name) = src.dotted(s, e)
            {
                st.mounts
                    .insert(receiver_key(name).to_string(), (prefix, line));
            }
        }
        "add_url_rule" => {
            let args = src.args(open, close);
            let Some(path) = args
                .first_or(&["rule"])
                .and_then(|(s, e)| src.plain_string(s, e))
                .filter(|p| p.starts_with('/'))
            else {
                return;
            };
            let handler = args
                .kw("view_func")
                .or_else(|| args.positional.get(2).copied())
                .and_then(|(s, e)| src.dotted(s, e))
                .map(str::to_string);
            let receiver = chain.key().unwrap_or("");
            st.push_routes(receiver, src.listed_methods(&args), &path, handler, line);
        }
        _ => {}
    }
}

/// A Django URL pattern: `path("orders/<int:pk>/", views.detail)` is a route (of any method:
/// the view decides), `re_path(r"^orders/(?P<pk>\d+)/$", …)` and the old `url(…)` too, read as
/// a path; `path("api/", include("shop.api_urls"))` mounts that module's patterns under the
/// prefix, for the graph to join.
fn django_pattern(src: &Src, st: &mut State, call: &Call) {
    let (callee, open, close) = (call.callee, call.open, call.close);
    let args = src.args(open, close);
    let (Some(&(ps, pe)), Some(&(vs, ve))) = (args.positional.first(), args.positional.get(1))
    else {
        return;
    };
    let Some(pattern) = src.plain_string(ps, pe) else {
        return;
    };
    let path = if callee == "path" {
        pattern
    } else {
        match regex_route(&pattern) {
            Some(p) => p,
            None => return,
        }
    };
    let path = format!("/{}", path.trim_start_matches('/'));
    let line = src.line_of(open);
    let called = src.call(vs, ve);
    if let Some((view, io, ic)) = called
        && view.rsplit('.').next() == Some("include")
    {
        let module = src
            .args(io, ic)
            .positional
            .first()
            .and_then(|&(ms, me)| src.plain_string(ms, me));
        if let Some(module) = module {
            st.facts.http.push(HttpFact::Mount {
                prefix: path,
                router: module,
                line,
            });
        }
        return;
    }
    // `views.detail`, or a class-based view `views.OrderView.as_view()`.
    let view = match called {
        Some((c, _, _)) => c.strip_suffix(".as_view"),
        None => src.dotted(vs, ve),
    };
    st.facts.http.push(HttpFact::Route {
        method: "ANY".to_string(),
        path,
        handler: view.map(|v| v.rsplit('.').next().unwrap_or(v).to_string()),
        line,
    });
}

/// A Django regex URL pattern as a path template (`^orders/(?P<pk>[0-9]+)/$` gives
/// `orders/<pk>/`), or `None` when it keeps regex syntax a path cannot show.
fn regex_route(pattern: &str) -> Option<String> {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    let body = body.strip_suffix('$').unwrap_or(body);
    let mut out = String::new();
    let mut rest = body;
    while let Some(i) = rest.find('(') {
        out.push_str(&rest[..i]);
        let group = &rest[i..];
        let end = group.find(')')?;
        let name = group
            .strip_prefix("(?P<")
            .and_then(|g| g.split_once('>'))
            .map_or("param", |(n, _)| n);
        out.push('<');
        out.push_str(name);
        out.push('>');
        rest = &group[end + 1..];
    }
    out.push_str(rest);
    (!out.contains(['\\', '[', '*', '+', '?', '|', '^', '$'])).then_some(out)
}

/// HTTP requests on a client (`requests`, `httpx`, `aiohttp`, `urllib`, sessions).
fn http_call(src: &Src, st: &mut State, call: &Call) {
    let (chain, callee, open, close) = (call.chain, call.callee, call.open, call.close);
    let line = src.line_of(open);
    match callee {
        "get" | "post" | "put" | "delete" | "patch" | "head" | "options" | "request" | "stream"
        | "fetch" | "urlopen" => {
            if !is_http_receiver(st, chain) {
                return;
            }
            let args = src.args(open, close);
            let (method, url) = match callee {
                "request" | "stream" => {
                    let m = args
                        .positional
                        .first()
                        .copied()
                        .or_else(|| args.kw("method"))
                        .and_then(|(s, e)| src.plain_string(s, e))
                        .map(|m| m.to_ascii_uppercase());
                    (
                        m,
                        args.positional.get(1).copied().or_else(|| args.kw("url")),
                    )
                }
                "fetch" | "urlopen" => (
                    None,
                    args.positional.first().copied().or_else(|| args.kw("url")),
                ),
                verb => (
                    Some(verb.to_ascii_uppercase()),
                    args.positional.first().copied().or_else(|| args.kw("url")),
                ),
            };
            let sure = matches!(
                chain.root(),
                "requests" | "httpx" | "aiohttp" | "urllib3" | "urllib"
            );
            if let Some((s, e)) = url
                && let Some(url) = src.url(s, e, sure)
            {
                st.facts.http.push(HttpFact::Call { method, url, line });
            }
        }
        _ => {}
    }
}

/// The Kafka library behind a `.subscribe(`/`.send(` receiver, when it is a consumer
/// (`producer == false`) or producer: bound to a construction in this file, a construction
/// itself (`KafkaProducer(…).send(`), or named like one (`self._producer`).
pub(super) fn kafka_receiver(st: &State, chain: &Chain, producer: bool) -> Option<&'static str> {
    let default = st.kafka_lib.unwrap_or("kafka");
    if let Some(ctor) = chain.ends_with_call {
        return if producer {
            producer_via(st, ctor)
        } else {
            consumer_via(st, ctor)
        };
    }
    let key = chain.key()?;
    let (bound, role_word) = if producer {
        (st.producers.get(key), "producer")
    } else {
        (st.consumers.get(key), "consumer")
    };
    if let Some(ctor) = bound {
        return if producer {
            producer_via(st, ctor)
        } else {
            consumer_via(st, ctor)
        }
        .or(Some(default));
    }
    chain
        .last()
        .to_ascii_lowercase()
        .contains(role_word)
        .then_some(default)
}

/// Whether a `.get(`/`.post(` receiver is an HTTP client: the `requests`/`httpx` modules, a
/// name bound to a session or client, a client constructed in place, or a name that says so.
pub(super) fn is_http_receiver(st: &State, chain: &Chain) -> bool {
    if chain.text.is_empty() {
        return false;
    }
    if let Some(ctor) = chain.ends_with_call {
        return matches!(
            ctor,
            "Session" | "ClientSession" | "AsyncClient" | "Client" | "session"
        );
    }
    if matches!(
        chain.root(),
        "requests" | "httpx" | "aiohttp" | "urllib3" | "urllib"
    ) {
        return true;
    }
    let Some(key) = chain.key() else {
        return false;
    };
    if st.http_clients.contains(key) {
        return true;
    }
    let last = chain.last().to_ascii_lowercase();
    last.contains("session") || last.contains("client") || last.contains("http")
}

/// Records one event per topic expression at `s..e`.
pub(super) fn push_topics(
    src: &Src,
    st: &mut State,
    role: EventRole,
    via: &'static str,
    s: usize,
    e: usize,
) {
    if let Some(topic) = src.topic(s, e) {
        common::push_event(&mut st.facts, role, topic, via, src.line_of(s));
    }
}

impl State {
    /// Records a route of `receiver` for each of `methods`, joined with the router's prefix
    /// by [`State::finish_routes`].
    pub(super) fn push_routes(
        &mut self,
        receiver: &str,
        methods: Vec<String>,
        path: &str,
        handler: Option<String>,
        line: u32,
    ) {
        for method in methods {
            self.routes.push(RawRoute {
                receiver: receiver.to_string(),
                method,
                path: path.to_string(),
                handler: handler.clone(),
                line,
            });
        }
    }

    /// Joins each route with the prefix of its router (and of the mount of that router); a
    /// mounted router this file does not define (`include_router(items.router, prefix=…)`
    /// with `items` imported) becomes a [`HttpFact::Mount`] for the graph to join.
    pub(super) fn finish_routes(&mut self) {
        let mut foreign: Vec<(&String, &(String, u32))> = self
            .mounts
            .iter()
            .filter(|(name, _)| !self.routers.contains_key(*name))
            .collect();
        foreign.sort_by_key(|(name, (_, line))| (*line, name.as_str()));
        for (router, (prefix, line)) in foreign {
            self.facts.http.push(HttpFact::Mount {
                prefix: prefix.clone(),
                router: router.clone(),
                line: *line,
            });
        }
        for r in std::mem::take(&mut self.routes) {
            let mount = self.mounts.get(&r.receiver).map_or("", |(p, _)| p.as_str());
            let prefix = self.routers.get(&r.receiver).map_or("", String::as_str);
            let path = join_path(&join_path(mount, prefix), &r.path);
            self.facts.http.push(HttpFact::Route {
                method: r.method,
                path,
                handler: r.handler,
                line: r.line,
            });
        }
    }
}

/// `"/v1"` + `"/orders"` gives `/v1/orders`; an empty path is the prefix itself.
pub(super) fn join_path(prefix: &str, path: &str) -> String {
    let prefix = prefix.trim_end_matches('/');
    let joined = if path.is_empty() {
        prefix.to_string()
    } else if path.starts_with('/') || prefix.is_empty() {
        format!("{prefix}{path}")
    } else {
        format!("{prefix}/{path}")
    };
    if joined.is_empty() {
        "/".to_string()
    } else if !joined.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}
