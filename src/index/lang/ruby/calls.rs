//! Assignments and the calls on what they bind: gRPC stubs, Kafka producers and consumers,
//! Net::HTTP / Faraday / HTTParty requests, read where a name meets its arguments.

use super::*;

/// `target = value` for a lowercase, `@ivar` or `self.x` target: records the client, stub,
/// producer or consumer it holds (what it holds as a string is the shared tracker's).
pub(super) fn assignment(src: &Src, st: &mut State, stmt: &Stmt, ctx: Ctx) {
    let code = src.code();
    let b = code.as_bytes();
    let Some(eq) = code[stmt.start..stmt.end].find('=').map(|p| stmt.start + p) else {
        return;
    };
    if matches!(b.get(eq + 1), Some(b'=' | b'~' | b'>'))
        || (eq > 0 && matches!(b[eq - 1], b'=' | b'!' | b'<' | b'>'))
    {
        return;
    }
    let target_end = if eq > 0 && b[eq - 1] == b'|' && eq >= 2 && b[eq - 2] == b'|' {
        eq - 2
    } else {
        eq
    };
    let Some(target) = src.name(stmt.start, target_end) else {
        return;
    };
    if target.as_bytes()[0].is_ascii_uppercase() {
        return;
    }
    let (vs, ve) = src.trim(eq + 1, stmt.end);
    if vs >= ve {
        return;
    }
    let key = target.strip_prefix("self.").unwrap_or(target);
    if src.plain_string(vs, ve).is_some() {
        return;
    }
    let value = &code[vs..ve];
    // A call: find the last method name of the value's chain.
    let callee_end = match value.as_bytes().last() {
        Some(b')') => match src.br.open_of(ve - 1) {
            Some(o) => o,
            None => return,
        },
        _ => ve,
    };
    let Some((cs, callee)) = ident_before(code, callee_end).filter(|(s, _)| *s >= vs) else {
        return;
    };
    let recv = if cs > vs && b[cs - 1] == b'.' {
        chain_before(code, &src.br, cs - 1)
    } else {
        Chain {
            text: "",
            start: cs,
            ends_with_call: None,
        }
    };
    let recv_text = recv.text.trim_start_matches("::");
    match callee {
        "new" if recv_text.ends_with("::Stub") => {
            let mut segs = recv_text.rsplit("::");
            segs.next();
            if let Some(svc) = segs.next() {
                st.stubs.entry(key.to_string()).or_default().push(StubVar {
                    service: svc.to_string(),
                    def: (!key.starts_with('@')).then_some(ctx.def).flatten(),
                });
                st.facts.grpc.push(GrpcFact::Client {
                    service: svc.to_string(),
                    var: Some(key.trim_start_matches('@').to_string()),
                    line: src.line_of(cs),
                });
            }
        }
        "producer" | "async_producer" => {
            let via = if st.rdkafka || recv.ends_with_call.is_some() {
                "rdkafka"
            } else if recv_text.contains("Karafka") || recv_text.contains("WaterDrop") {
                "karafka"
            } else {
                "ruby-kafka"
            };
            st.producers.insert(key.to_string(), via);
        }
        "new" if recv_text == "WaterDrop::Producer" => {
            st.producers.insert(key.to_string(), "karafka");
        }
        "consumer" => {
            let via = if st.rdkafka || recv.ends_with_call.is_some() {
                "rdkafka"
            } else {
                "ruby-kafka"
            };
            st.consumers.insert(key.to_string(), via);
        }
        "new" | "persistent" | "start"
            if matches!(
                recv_text,
                "Faraday" | "Net::HTTP" | "HTTP" | "Excon" | "HTTPClient" | "Typhoeus"
            ) =>
        {
            st.http_clients.insert(key.to_string());
        }
        _ => {}
    }
}

/// The receiver chain ending at the separator (`.`, `&.`, `::`) that starts at `sep`.
pub(super) fn chain_before<'c>(code: &'c str, br: &Brackets, sep: usize) -> Chain<'c> {
    let b = code.as_bytes();
    let mut p = sep;
    if p > 0 && b[p - 1] == b'&' {
        p -= 1;
    }
    let end = p;
    let mut start = p;
    let mut ends_with_call = None;
    for step in 0..16 {
        let plain = p > 0 && is_ident_byte(b[p - 1]);
        let Some((s, called)) = common::segment_before(code, br, p) else {
            break;
        };
        if step == 0 {
            ends_with_call = called;
        }
        start = s;
        if plain {
            while start > 0 && b[start - 1] == b'@' {
                start -= 1;
            }
        }
        if start >= 2 && (b[start - 2] == b':' && b[start - 1] == b':') {
            p = start - 2;
        } else if start >= 1 && b[start - 1] == b'.' {
            p = start - 1;
            if p > 0 && b[p - 1] == b'&' {
                p -= 1;
            }
        } else {
            break;
        }
    }
    Chain {
        text: &code[start..end],
        start,
        ends_with_call,
    }
}

/// A word that may name a called method: handles calls on receivers (`x.subscribe("t")`,
/// `Net::HTTP.get(uri)`, `@stub.get_order req`) and bare calls (`deliver_message(…)`).
pub(super) fn call_token(src: &Src, st: &mut State, stmt: &Stmt, ts: usize, te: usize, ctx: Ctx) {
    let code = src.code();
    let b = code.as_bytes();
    let name = &code[ts..te];
    let chain = receiver_chain(src, ts);
    if b[ts - usize::from(ts > 0)] == b':' && !chain.text.is_empty() && b.get(te) != Some(&b'(') {
        // `A::B` constant path segment, not a call.
        if !name.as_bytes()[0].is_ascii_lowercase() {
            return;
        }
    }
    // A bare call first in its statement is a DSL call, read by `dsl_stmt`.
    if chain.text.is_empty() && ts == stmt.start {
        return;
    }
    // gRPC calls on a stub variable.
    if !chain.text.is_empty()
        && let Some(svc) = stub_of(st, chain.key(), ctx)
    {
        if !matches!(
            name,
            "new" | "class" | "nil" | "is_a" | "respond_to" | "send"
        ) {
            st.facts.push_grpc_call(
                svc,
                chain.key().trim_start_matches('@').to_string(),
                name.to_string(),
                src.line_of(ts),
            );
        }
        return;
    }
    let interesting = matches!(
        name,
        "new"
            | "send_message"
            | "send_message_batch"
            | "receive_message"
            | "publish"
            | "deliver_message"
            | "produce"
            | "produce_sync"
            | "produce_async"
            | "subscribe"
            | "each_message"
            | "each_batch"
            | "get"
            | "post"
            | "put"
            | "patch"
            | "delete"
            | "head"
            | "get_response"
            | "post_form"
    );
    if !interesting {
        return;
    }
    let (args_s, args_e) = call_args(src, stmt, te);
    let args = src.args(args_s, args_e);
    let line = src.line_of(ts);
    let recv = chain.text.trim_start_matches("::");
    match name {
        "new" => {
            if recv.ends_with("::Stub") && !is_assigned(code, stmt, chain.start) {
                let mut segs = recv.rsplit("::");
                segs.next();
                if let Some(svc) = segs.next() {
                    st.facts.grpc.push(GrpcFact::Client {
                        service: svc.to_string(),
                        var: None,
                        line,
                    });
                }
            } else if let Some(verb) = recv.strip_prefix("Net::HTTP::")
                && let Some(&(a, z)) = args.positional.first()
                && let Some(url) = src.url(a, z, true)
            {
                st.facts.http.push(HttpFact::Call {
                    method: Some(verb.to_ascii_uppercase()),
                    url,
                    line,
                });
            }
        }
        "deliver_message" | "produce" | "produce_sync" | "produce_async" | "subscribe"
        | "each_message" | "each_batch" => kafka_call(src, st, &chain, name, &args),
        "send_message" | "send_message_batch" | "receive_message" | "publish" => {
            aws_call(src, st, name, &args)
        }
        _ => {
            // HTTP verbs.
            let bare_httparty = chain.text.is_empty() && st.httparty && b.get(te) == Some(&b'(');
            let Some(sure) = bare_httparty
                .then_some(true)
                .or_else(|| http_receiver(st, &chain))
            else {
                return;
            };
            let method = match name {
                "get_response" => "GET",
                "post_form" => "POST",
                v => v,
            };
            if let Some(&(a, z)) = args.positional.first()
                && let Some(url) = src.url(a, z, sure)
            {
                st.facts.http.push(HttpFact::Call {
                    method: Some(method.to_ascii_uppercase()),
                    url,
                    line,
                });
            }
        }
    }
}

/// The receiver chain before the method name at `ts` (`@client.` before `get`), empty for a
/// bare call.
fn receiver_chain<'s>(src: &'s Src, ts: usize) -> Chain<'s> {
    let code = src.code();
    let b = code.as_bytes();
    if ts > 0 && (b[ts - 1] == b'.' || (ts >= 2 && (b[ts - 2] == b':' && b[ts - 1] == b':'))) {
        let sep = if b[ts - 1] == b'.' { ts - 1 } else { ts - 2 };
        chain_before(code, &src.br, sep)
    } else {
        Chain {
            text: "",
            start: ts,
            ends_with_call: None,
        }
    }
}

/// aws-sdk SQS and SNS: `sqs.send_message(queue_url: url, message_body: b)`,
/// `receive_message(queue_url: url)`, `sns.publish(topic_arn: arn, message: m)`; the
/// address names the queue or topic. The SDK's own keywords tell these from other
/// `publish` calls.
fn aws_call(src: &Src, st: &mut State, name: &str, args: &Args) {
    let Some((role, via, keys)) = common::aws_sdk_method(name) else {
        return;
    };
    let address = keys.iter().find_map(|k| args.kw(&common::snake_case(k)));
    if let Some((a, z)) = address
        && let Some(topic) = common::topic_of(common::aws_destination(src.value(a, z)))
    {
        common::push_event(&mut st.facts, role, topic, via, src.line_of(a));
    }
}

/// Kafka: ruby-kafka `deliver_message` / `each_message`, producers' `produce` (ruby-kafka,
/// rdkafka, Karafka) and consumers' `subscribe`, on a bound or Kafka-named receiver.
fn kafka_call(src: &Src, st: &mut State, chain: &Chain, name: &str, args: &Args) {
    match name {
        "deliver_message" => {
            if let Some((a, z)) = args.kw("topic") {
                push_event(src, st, EventRole::Producer, "ruby-kafka", (a, z));
            }
        }
        "produce" | "produce_sync" | "produce_async" => {
            let via = st
                .producers
                .get(chain.key())
                .copied()
                .or_else(|| {
                    (chain.text.trim_start_matches("::") == "Karafka.producer").then_some("karafka")
                })
                .or_else(|| {
                    chain
                        .last()
                        .to_ascii_lowercase()
                        .contains("producer")
                        .then_some(if name != "produce" {
                            "karafka"
                        } else if st.rdkafka {
                            "rdkafka"
                        } else {
                            "ruby-kafka"
                        })
                });
            if let Some(via) = via
                && let Some((a, z)) = args.kw("topic")
            {
                push_event(src, st, EventRole::Producer, via, (a, z));
            }
        }
        "subscribe" => {
            let via = st.consumers.get(chain.key()).copied().or_else(|| {
                chain
                    .last()
                    .to_ascii_lowercase()
                    .contains("consumer")
                    .then_some(if st.rdkafka { "rdkafka" } else { "ruby-kafka" })
            });
            if let Some(via) = via {
                for &(a, z) in &args.positional {
                    for (x, y) in list_items(src, a, z) {
                        push_event(src, st, EventRole::Consumer, via, (x, y));
                    }
                }
            }
        }
        "each_message" | "each_batch" => {
            if let Some((a, z)) = args.kw("topic") {
                push_event(src, st, EventRole::Consumer, "ruby-kafka", (a, z));
            }
        }
        _ => {}
    }
}

/// The arguments of the call whose method name ends at `te`: `(…)` right after it, or a
/// command call's arguments up to a `do`/`{` block or a modifier `if`/`unless`.
pub(super) fn call_args(src: &Src, stmt: &Stmt, te: usize) -> (usize, usize) {
    let code = src.code();
    let b = code.as_bytes();
    if b.get(te) == Some(&b'(') {
        return match src.br.close_of(te) {
            Some(c) => (te + 1, c),
            None => (te, te),
        };
    }
    if b.get(te) != Some(&b' ') {
        return (te, te);
    }
    // A command call needs an argument right after the space (not an operator).
    match lex::next_non_space(code, te) {
        Some((p, c))
            if p < stmt.end
                && (is_ident_byte(c) || matches!(c, b'"' | b'\'' | b':' | b'@' | b'[')) =>
        {
            // One pass up to a block or a modifier, bounded so a huge one-line statement of
            // nested command calls stays linear.
            let mut limit = stmt.end.min(p + ARGS_WINDOW);
            while !code.is_char_boundary(limit) {
                limit -= 1;
            }
            let stop = (p..limit)
                .find(|&k| {
                    b[k] == b' '
                        && [&b"do"[..], b"if ", b"unless ", b"{"].iter().any(|kw| {
                            b[k + 1..].starts_with(kw)
                                && (kw.len() != 2
                                    || b.get(k + 3).is_none_or(|&c| !is_ident_byte(c)))
                        })
                })
                .unwrap_or(limit);
            (p, stop)
        }
        _ => (te, te),
    }
}

/// The elements of `["a", "b"]`, `%w[a b]` (as ranges of their items), or the range itself.
pub(super) fn list_items(src: &Src, s: usize, e: usize) -> Vec<(usize, usize)> {
    let (s, e) = src.trim(s, e);
    let b = src.code().as_bytes();
    if s < e && b[s] == b'[' && src.br.close_of(s) == Some(e - 1) {
        return common::split_top(src.code(), s + 1, e - 1, b',', &src.br);
    }
    vec![(s, e)]
}

/// True when the expression starting at `at` is the value of an assignment in `stmt`.
pub(super) fn is_assigned(code: &str, stmt: &Stmt, at: usize) -> bool {
    let b = code.as_bytes();
    matches!(
        lex::prev_non_space(&code[..at], at),
        Some((p, b'=')) if p >= stmt.start && !(p > 0 && matches!(b[p - 1], b'=' | b'!' | b'<' | b'>'))
    )
}

/// Whether a `.get(` receiver is an HTTP client: `Some(true)` when it is one by its library
/// (`Net::HTTP`, `Faraday.new(…)`, a variable assigned one), `Some(false)` when only its name
/// says so (`conn`, `client`, `http`, `session`: the URL must then read like one), `None`
/// otherwise.
pub(super) fn http_receiver(st: &State, chain: &Chain) -> Option<bool> {
    let text = chain.text.trim_start_matches("::");
    if text.is_empty() {
        return None;
    }
    if matches!(
        text,
        "Net::HTTP"
            | "Faraday"
            | "HTTParty"
            | "RestClient"
            | "HTTP"
            | "Typhoeus"
            | "Excon"
            | "HTTPX"
    ) || (text == "self.class" && st.httparty)
    {
        return Some(true);
    }
    if let Some(ctor) = chain.ends_with_call {
        return (matches!(ctor, "new" | "persistent") && text.starts_with(['F', 'H', 'E', 'N']))
            .then_some(true);
    }
    if st.http_clients.contains(chain.key()) {
        return Some(true);
    }
    let last = chain.last().to_ascii_lowercase();
    (last.contains("conn")
        || last.contains("client")
        || last.contains("http")
        || last.contains("session"))
    .then_some(false)
}

/// The service of the stub `name` holds: an `@ivar` anywhere in the file, a local within the
/// method that assigned it.
pub(super) fn stub_of(st: &State, name: &str, ctx: Ctx) -> Option<String> {
    st.stubs
        .get(name)?
        .iter()
        .rev()
        .find(|v| v.def.is_none() || v.def == ctx.def)
        .map(|v| v.service.clone())
}

/// Records an event of `role` through `via` whose topic is the argument at `s..e`.
pub(super) fn push_event(
    src: &Src,
    st: &mut State,
    role: EventRole,
    via: &str,
    (s, e): (usize, usize),
) {
    if let Some(topic) = src.topic(s, e) {
        common::push_event(&mut st.facts, role, topic, via, src.line_of(s));
    }
}
