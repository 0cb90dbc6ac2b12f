//! What an assigned name holds: a gRPC stub, a Kafka producer or consumer, an HTTP session,
//! a router prefix; the constants the evaluator reads come from the shared tracker.

use super::*;

/// How many classes a name built from several (`service = DummyX()` or `X()`) keeps.
const MAX_CLASSES_PER_NAME: usize = 8;

/// A name as bindings are keyed: without a leading `self.`/`cls.`.
pub(super) fn receiver_key(name: &str) -> &str {
    name.strip_prefix("self.")
        .or_else(|| name.strip_prefix("cls."))
        .unwrap_or(name)
}

/// An assignment statement: symbols for module and class constants, and name bindings.
pub(super) fn assignment(src: &Src, st: &mut State, stmt: &Stmt, scopes: &[Scope]) {
    let code = src.code();
    let b = code.as_bytes();
    let mut i = stmt.start;
    let mut eq = None;
    while i < stmt.end {
        match b[i] {
            b'(' | b'[' | b'{' => {
                match src.br.close_of(i) {
                    Some(c) if c < stmt.end => i = c + 1,
                    _ => i += 1,
                }
                continue;
            }
            b'=' if b.get(i + 1) != Some(&b'=')
                && (i == 0 || !b"=!<>:+-*/%&|^@~".contains(&b[i - 1])) =>
            {
                eq = Some(i);
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let Some(eq) = eq else { return };
    let (ts, te) = src.trim(stmt.start, eq);
    // `name: Annotation = value`.
    let (target_end, annotation) = match code[ts..te].find(':') {
        Some(c) => (ts + c, Some(code[ts + c + 1..te].trim())),
        None => (te, None),
    };
    let Some(target) = src.dotted(ts, target_end) else {
        return;
    };
    let (vs, ve) = src.trim(eq + 1, stmt.end);
    // Chained `a = b = value`: the value is after the last top-level `=`.
    let (vs, ve) = match last_assign_eq(code, vs, ve, &src.br) {
        Some(p) => src.trim(p + 1, ve),
        None => (vs, ve),
    };
    let line = src.line_of(ts);
    let doc = src.lx.doc_comment_above(stmt.line);
    let simple = !target.contains('.');
    // The symbol and the binding the assignment declares, in whichever scope.
    let symbol = |kind, container| Symbol {
        name: target.to_string(),
        kind,
        line,
        end_line: stmt.end_line,
        doc_line: doc,
        container,
    };
    let binding = |name, value| Binding {
        name,
        value: Value::lit(value),
        line,
    };
    match scopes.last() {
        None if simple => {
            let is_alias = annotation.is_some_and(|a| a.ends_with("TypeAlias"));
            let kind = if is_alias {
                SymbolKind::TypeAlias
            } else if common::is_upper_const(target) {
                SymbolKind::Constant
            } else {
                SymbolKind::Variable
            };
            let listed = kind != SymbolKind::Variable
                || (!target.starts_with("__") && st.module_vars.insert(target.to_string()));
            if listed {
                st.facts.symbols.push(symbol(kind, None));
            }
            if kind == SymbolKind::Constant
                && let Some(value) = src.const_value(vs, ve)
            {
                st.facts.bindings.push(binding(target.to_string(), value));
            }
        }
        Some(scope) if scope.is_class && simple && !target.starts_with('_') => {
            let kind = if scope.is_enum {
                Some(SymbolKind::EnumValue)
            } else if common::is_upper_const(target) {
                Some(SymbolKind::Constant)
            } else {
                None
            };
            if let Some(kind) = kind {
                st.facts
                    .symbols
                    .push(symbol(kind, Some(scope.name.clone())));
                if let Some(value) = src.const_value(vs, ve) {
                    let name = format!("{}.{}", scope.name, target);
                    st.facts.bindings.push(binding(name, value));
                }
            }
        }
        _ => {}
    }
    bind(src, st, target, vs, ve);
}

/// The offset of the last top-level plain `=` in `s..e` (chained assignment), if any.
pub(super) fn last_assign_eq(code: &str, s: usize, e: usize, br: &Brackets) -> Option<usize> {
    let b = code.as_bytes();
    let mut i = s;
    let mut last = None;
    while i < e {
        match b[i] {
            b'(' | b'[' | b'{' => {
                match br.close_of(i) {
                    Some(c) if c < e => i = c + 1,
                    _ => i += 1,
                }
                continue;
            }
            b'=' if b.get(i + 1) != Some(&b'=') && !b"=!<>:+-*/%&|^@~".contains(&b[i - 1]) => {
                last = Some(i)
            }
            // A lambda's default or a keyword argument only occurs inside brackets; a `:` at
            // the top level is a dict/lambda/slice, where we stop looking.
            b':' => return last,
            _ => {}
        }
        i += 1;
    }
    last
}

/// Records what `written` (`self.stub`, `stub`) holds after `written = <value at s..e>`.
pub(super) fn bind(src: &Src, st: &mut State, written: &str, s: usize, e: usize) {
    let name = receiver_key(written);
    if name.is_empty() {
        return;
    }
    // What a name holds as a string is the shared assignment tracker's; here only what
    // it holds as a client.
    if src.plain_string(s, e).is_some() {
        return;
    }
    let Some((callee, open, close)) = src.call(s, e) else {
        return;
    };
    let last = callee.rsplit('.').next().unwrap_or(callee);
    let args = src.args(open, close);
    let kw_string = |k: &str| args.kw(k).and_then(|(a, b)| src.plain_string(a, b));
    match last {
        _ if st.grpc_file && stub_service(last).is_some() => {
            if let Some(svc) = stub_service(last) {
                st.stubs
                    .entry(written.to_string())
                    .or_default()
                    .push(StubVar {
                        service: svc.to_string(),
                        def: (written == name && !name.contains('.'))
                            .then_some(st.current_def)
                            .flatten(),
                    });
                st.bound_stubs.insert(open);
                st.facts.grpc.push(GrpcFact::Client {
                    service: svc.to_string(),
                    var: Some(name.to_string()),
                    line: src.line_of(open),
                });
            }
        }
        _ if producer_via(st, callee).is_some() => {
            st.producers.insert(name.to_string(), callee.to_string());
        }
        _ if consumer_via(st, callee).is_some() => {
            st.consumers.insert(name.to_string(), callee.to_string());
        }
        "APIRouter" => {
            st.routers
                .insert(name.to_string(), kw_string("prefix").unwrap_or_default());
        }
        "Blueprint" => {
            st.routers.insert(
                name.to_string(),
                kw_string("url_prefix").unwrap_or_default(),
            );
        }
        "Flask" | "FastAPI" | "Quart" | "Starlette" => {
            st.routers.insert(name.to_string(), String::new());
        }
        "Session" | "ClientSession" | "AsyncClient" | "Client" | "PoolManager"
            if is_http_ctor(callee) =>
        {
            st.http_clients.insert(name.to_string());
        }
        _ if last.as_bytes().first().is_some_and(u8::is_ascii_uppercase) => {
            // Every class the name is built from: `service = DummyX()` in one branch and
            // `service = X()` in the other both reach the registration that follows.
            // The latest few only: each registration of the name is a server per class, so
            // a name built from thousands of classes and registered thousands of times made
            // millions of facts.
            let classes = st.instances.entry(name.to_string()).or_default();
            if !classes.iter().any(|c| c == last) {
                if classes.len() == MAX_CLASSES_PER_NAME {
                    classes.remove(0);
                }
                classes.push(last.to_string());
            }
        }
        _ => {}
    }
}

/// The service of the stub `written` holds at `line`: a local binding of the innermost
/// function containing the line, else a file-wide one (`self.x`, module level).
pub(super) fn stub_of(st: &State, written: &str, line: u32) -> Option<String> {
    let span = |def: usize| {
        st.facts
            .symbols
            .get(def)
            .map_or((0, u32::MAX), |s| (s.line, s.end_line))
    };
    st.stubs
        .get(written)?
        .iter()
        .filter(|v| {
            v.def.is_none_or(|d| {
                let (a, b) = span(d);
                a <= line && line <= b
            })
        })
        .min_by_key(|v| v.def.map_or(u32::MAX, |d| span(d).1 - span(d).0))
        .map(|v| v.service.clone())
}

/// `OrderServiceStub` gives `OrderService`.
pub(super) fn stub_service(callee_last: &str) -> Option<&str> {
    let svc = callee_last.strip_suffix("Stub")?;
    (!svc.is_empty() && svc.as_bytes()[0].is_ascii_uppercase()).then_some(svc)
}

pub(super) fn is_http_ctor(callee: &str) -> bool {
    matches!(
        callee,
        "requests.Session"
            | "requests.session"
            | "Session"
            | "aiohttp.ClientSession"
            | "ClientSession"
            | "httpx.Client"
            | "httpx.AsyncClient"
            | "AsyncClient"
            | "urllib3.PoolManager"
            | "PoolManager"
    )
}

/// The Kafka library of a producer constructor, if `callee` is one.
pub(super) fn producer_via(st: &State, callee: &str) -> Option<&'static str> {
    client_via(st, callee, "Producer", "Serializing")
}

/// The Kafka library of a consumer constructor, if `callee` is one.
pub(super) fn consumer_via(st: &State, callee: &str) -> Option<&'static str> {
    client_via(st, callee, "Consumer", "Deserializing")
}

/// The Kafka library of a client constructor `callee` whose class is named `…{role}`:
/// `AIOKafka{role}`, `Kafka{role}`, and confluent-kafka's `{role}` and `{serde}{role}`.
fn client_via(st: &State, callee: &str, role: &str, serde: &str) -> Option<&'static str> {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    let confluent = callee.contains("confluent_kafka") || st.kafka_lib == Some("confluent-kafka");
    match last.strip_suffix(role)? {
        "AIOKafka" => Some("aiokafka"),
        "Kafka" => Some("kafka-python"),
        prefix if confluent && (prefix.is_empty() || prefix == serde) => Some("confluent-kafka"),
        _ => None,
    }
}
