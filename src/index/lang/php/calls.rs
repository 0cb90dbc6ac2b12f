//! Calls, read where a name meets `(`: Laravel / Slim / Lumen routes and groups, Guzzle,
//! `Http::`, curl and `file_get_contents` requests, php-rdkafka topics and gRPC client calls.

use super::decls::assigned_target;
use super::*;
use crate::index::lang::script::{join, push_routes, rest_actions, singular};

/// What the steps of [`call_site`] read about one call: its name, the receiver chain before
/// it, its arguments, and whether it is on a router (`Route::`, `$app`, `$group`).
struct Site<'s> {
    name: &'s str,
    chain: Chain<'s>,
    args: Args<'s>,
    line: u32,
    close: usize,
    class: Option<&'s str>,
    router_var: bool,
    /// The prefix of the enclosing route groups, for a call on a router.
    group_prefix: String,
}

/// A call `name(…)` at `ts..te` with parentheses `open..close`.
pub(super) fn call_site(
    src: &Src,
    st: &mut State,
    ts: usize,
    te: usize,
    open: usize,
    close: usize,
    class: Option<&str>,
) {
    let code = src.code();
    let name = &code[ts..te];
    let chain = receiver_chain(src, ts);
    let line = src.line_of(ts);
    // gRPC calls on a client variable/property.
    if !chain.text.is_empty()
        && let Some(key) = chain.key()
        && let Some(svc) = st.grpc_clients.get(key)
    {
        st.facts
            .push_grpc_call(svc.clone(), key.to_string(), name.to_string(), line);
        return;
    }
    if chain.text.is_empty() && (name.starts_with("curl_") || name == "file_get_contents") {
        curl_call(src, st, name, ts, (open, close), class);
        return;
    }
    if !interesting(name) {
        return;
    }
    let root = chain.root();
    let on_route = root == "Route" || root.ends_with("\\Route");
    // Slim and Lumen route on a variable: `$app->get(…)`, `$router->group(…)`, `$group->get(…)`
    // inside a group closure; they need a handler, so `$app->get('x')` is no route.
    let router_var = !on_route && is_router(st, &chain);
    let on_router = on_route || router_var;
    // Route groups: leave the ones that closed before this call.
    while st.groups.last().is_some_and(|&(c, _)| c < ts) {
        st.groups.pop();
    }
    let group_prefix = if on_router {
        st.groups.last().map_or(String::new(), |(_, p)| p.clone())
    } else {
        String::new()
    };
    let (app_factory, kafka) = (root == "AppFactory", root == "Kafka");
    let site = Site {
        name,
        chain,
        args: src.args(open, close),
        line,
        close,
        class,
        router_var,
        group_prefix,
    };
    match name {
        "create" if app_factory => app_factory_create(src, st, ts),
        "group" if on_router => route_group(src, st, &site),
        "get" | "post" | "put" | "patch" | "delete" | "options" | "any" | "match" | "map"
            if on_router =>
        {
            route_call(src, st, &site)
        }
        "resource" | "apiResource" if on_route => resource_routes(src, st, &site),
        "newTopic" | "subscribe" | "onTopic" | "publishOn" => kafka_call(src, st, &site),
        "sendMessage" | "sendMessageBatch" | "receiveMessage" | "publish" => {
            aws_call(src, st, &site)
        }
        "consumer" | "createConsumer" if kafka => kafka_call(src, st, &site),
        "get" | "post" | "put" | "patch" | "delete" | "head" | "request" | "requestAsync"
        | "getAsync" | "postAsync" | "putAsync" | "patchAsync" | "deleteAsync" => {
            http_call(src, st, &site)
        }
        "define" if site.chain.text.is_empty() => define_call(src, st, &site),
        _ => {}
    }
}

/// The receiver chain before the call name at `ts` (`$this->client->` before `get`), empty
/// for a plain function call.
fn receiver_chain<'s>(src: &'s Src, ts: usize) -> Chain<'s> {
    let code = src.code();
    let b = code.as_bytes();
    if ts >= 2
        && ((b[ts - 2] == b'-' && b[ts - 1] == b'>') || (b[ts - 2] == b':' && b[ts - 1] == b':'))
    {
        let mut sep = ts - 2;
        if sep > 0 && b[sep - 1] == b'?' {
            sep -= 1;
        }
        chain_before(code, &src.br, sep)
    } else {
        Chain {
            text: "",
            start: ts,
        }
    }
}

/// The call names [`call_site`] reads anything from.
fn interesting(name: &str) -> bool {
    matches!(
        name,
        "group"
            | "get"
            | "post"
            | "put"
            | "patch"
            | "delete"
            | "options"
            | "any"
            | "match"
            | "resource"
            | "apiResource"
            | "newTopic"
            | "sendMessage"
            | "sendMessageBatch"
            | "receiveMessage"
            | "publish"
            | "subscribe"
            | "onTopic"
            | "publishOn"
            | "consumer"
            | "createConsumer"
            | "head"
            | "request"
            | "requestAsync"
            | "getAsync"
            | "postAsync"
            | "putAsync"
            | "patchAsync"
            | "deleteAsync"
            | "define"
            | "map"
            | "create"
    )
}

/// Slim `$app = AppFactory::create()`: the variable is a router.
fn app_factory_create(src: &Src, st: &mut State, ts: usize) {
    if let Some(target) = assigned_target(src, ts)
        && let Some(k) = target.key()
    {
        st.routers.insert(k.to_string());
    }
}

/// A route group (`Route::prefix('v1')->group(…)`, `Route::group(['prefix' => …], …)`, Slim
/// `$app->group('/api', function ($group) { … })`): its prefix holds until it closes.
fn route_group(src: &Src, st: &mut State, site: &Site) {
    let code = src.code();
    let args = &site.args;
    let mut own = String::new();
    // Slim `$app->group('/api', function (RouteCollectorProxy $group) { … })`.
    if site.router_var
        && let Some(&(a, z)) = args.positional.first()
        && let Some(v) = src.plain_string(a, z)
    {
        own = v;
    }
    // The group closure's parameters route too.
    for &(a, z) in &args.positional {
        let (a, z) = src.trim(a, z);
        let head = &code[a..z];
        if (head.starts_with("function") || head.starts_with("fn"))
            && let Some(open) = head.find('(').map(|p| a + p)
            && let Some(close) = src.br.close_of(open)
        {
            for w in code[open + 1..close]
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            {
                if let Some(v) = w.strip_prefix('$').filter(|v| !v.is_empty()) {
                    st.routers.insert(v.to_string());
                }
            }
        }
    }
    // `Route::prefix('v1')->…->group(…)`
    if let Some(p) = site.chain.text.find("prefix(") {
        let at = site.chain.start + p + 6;
        if let Some(c) = src.br.close_of(at)
            && let Some(v) = src.plain_string(at + 1, c)
        {
            own = v;
        }
    }
    // `Route::group(['prefix' => 'v1'], function () { … })`
    if let Some(&(a, z)) = args.positional.first() {
        for (x, y) in src.items(a, z) {
            if let Some(arrow) = code[x..y].find("=>")
                && src.plain_string(x, x + arrow).as_deref() == Some("prefix")
                && let Some(v) = src.plain_string(x + arrow + 2, y)
            {
                own = v;
            }
        }
    }
    let full = if own.is_empty() {
        site.group_prefix.clone()
    } else {
        join(&site.group_prefix, &own)
    };
    st.groups.push((site.close, full));
}

/// A route on a router: `Route::get('/x', …)`, `Route::match(['GET', 'POST'], …)`,
/// `$app->get('/x', handler)`.
fn route_call(src: &Src, st: &mut State, site: &Site) {
    let args = &site.args;
    let (methods, rest) = if site.name == "match" || site.name == "map" {
        let methods: Vec<String> = args
            .positional
            .first()
            .map(|&(a, z)| src.upper_strings(a, z))
            .unwrap_or_default();
        (methods, 1)
    } else if site.name == "any" {
        (vec!["ANY".to_string()], 0)
    } else {
        (vec![site.name.to_ascii_uppercase()], 0)
    };
    let Some(path) = args
        .positional
        .get(rest)
        .and_then(|&(a, z)| src.plain_string(a, z))
    else {
        return;
    };
    if site.router_var && args.positional.get(rest + 1).is_none() {
        return;
    }
    let handler = args
        .positional
        .get(rest + 1)
        .and_then(|&(a, z)| laravel_handler(src, a, z));
    let full = join(&site.group_prefix, &path);
    push_routes(&mut st.facts, methods, &full, handler, site.line);
}

/// `Route::resource('photos', PhotoController::class)`: the resource's routes.
fn resource_routes(src: &Src, st: &mut State, site: &Site) {
    let args = &site.args;
    let Some(res) = args
        .positional
        .first()
        .and_then(|&(a, z)| src.plain_string(a, z))
    else {
        return;
    };
    let controller = args
        .positional
        .get(1)
        .and_then(|&(a, z)| laravel_handler(src, a, z));
    let base = join(&site.group_prefix, &res);
    let param = res.rsplit(['/', '.']).next().unwrap_or(&res);
    let member = format!("{base}/{{{}}}", singular(param));
    for (action, method, path) in rest_actions(&base, &member, "store", ["PUT", "PATCH"]) {
        st.facts.http.push(HttpFact::Route {
            method: method.to_string(),
            path: path.clone(),
            handler: Some(match &controller {
                Some(c) => format!("{c}@{action}"),
                None => action.to_string(),
            }),
            line: site.line,
        });
    }
}

/// php-rdkafka (`$producer->newTopic('t')`, `$consumer->subscribe(['t'])`) and laravel-kafka
/// (`Kafka::publishOn('t')`, `Kafka::consumer(['t'])`) topics.
fn kafka_call(src: &Src, st: &mut State, site: &Site) {
    let (chain, args, class) = (&site.chain, &site.args, site.class);
    match site.name {
        "newTopic" => {
            let consumer = chain
                .key()
                .and_then(|k| st.kafka.get(k))
                .copied()
                .unwrap_or(false);
            let role = if consumer {
                EventRole::Consumer
            } else {
                EventRole::Producer
            };
            if let Some(&(a, z)) = args.positional.first() {
                push_event(src, st, role, "php-rdkafka", a, z, class);
            }
        }
        "subscribe" => {
            let consumer = chain.key().is_some_and(|k| {
                st.kafka.get(k) == Some(&true) || k.to_ascii_lowercase().contains("consumer")
            });
            if consumer && let Some(&(a, z)) = args.positional.first() {
                for (x, y) in src.items(a, z) {
                    push_event(src, st, EventRole::Consumer, "php-rdkafka", x, y, class);
                }
            }
        }
        "onTopic" | "publishOn" => {
            if let Some(&(a, z)) = args.positional.first() {
                push_event(src, st, EventRole::Producer, "laravel-kafka", a, z, class);
            }
        }
        _ => {
            if let Some(&(a, z)) = args.positional.first() {
                for (x, y) in src.items(a, z) {
                    push_event(src, st, EventRole::Consumer, "laravel-kafka", x, y, class);
                }
            }
        }
    }
}

/// AWS SDK for PHP, SQS and SNS: `$sqs->sendMessage(['QueueUrl' => $url, …])`,
/// `receiveMessage([...])`, `$sns->publish(['TopicArn' => $arn, …])`; the address names the
/// queue or topic. The SDK's own array keys tell these from other `publish` calls.
fn aws_call(src: &Src, st: &mut State, site: &Site) {
    let Some((role, via, keys)) = common::aws_sdk_method(site.name) else {
        return;
    };
    let Some(&(a, z)) = site.args.positional.first() else {
        return;
    };
    let code = src.code();
    for (x, y) in src.items(a, z) {
        // The code is masked (string contents blanked): the `=>` is found there, the key
        // read from its literal.
        let Some(arrow) = code[x..y].find("=>") else {
            continue;
        };
        let key = src.literal(x, x + arrow).map(|l| l.value());
        if !key.is_some_and(|k| keys.contains(&k.as_ref())) {
            continue;
        }
        let value = src.value(x + arrow + 2, y, site.class);
        if let Some(topic) = common::topic_of(common::aws_destination(value)) {
            common::push_event(&mut st.facts, role, topic, via, src.line_of(x));
        }
    }
}

/// An HTTP request on a client (Guzzle `$client->get($url)`, `request('POST', $url)`,
/// `Http::post($url)`), its URL under the client's base URI when it has one.
fn http_call(src: &Src, st: &mut State, site: &Site) {
    let (chain, args, class, line) = (&site.chain, &site.args, site.class, site.line);
    let Some(sure) = http_receiver(st, chain) else {
        return;
    };
    let verb = site.name.trim_end_matches("Async");
    let (method, url) = if verb == "request" {
        (
            args.positional
                .first()
                .and_then(|&(a, z)| src.plain_string(a, z))
                .map(|m| m.to_ascii_uppercase()),
            args.positional.get(1).copied(),
        )
    } else {
        (
            Some(verb.to_ascii_uppercase()),
            args.positional.first().copied(),
        )
    };
    if let Some((a, z)) = url
        && let Some(mut url) = src.url(a, z, sure, class)
    {
        if let Some(&(ba, bz)) = chain.key().and_then(|k| st.http_bases.get(k)) {
            url = with_base(src.value(ba, bz, class), url);
        }
        st.facts.http.push(HttpFact::Call { method, url, line });
    }
}

/// `define('NAME', value)`: a constant, and its binding when the value is known.
fn define_call(src: &Src, st: &mut State, site: &Site) {
    let (args, class, close) = (&site.args, site.class, site.close);
    if let (Some(&(a, z)), Some(&(v, w))) = (args.positional.first(), args.positional.get(1))
        && let Some(cname) = src.plain_string(a, z)
    {
        let line = src.line_of(a);
        st.facts.push_symbol(
            &cname,
            SymbolKind::Constant,
            (line, src.line_of(close)),
            src.lx.doc_comment_above(line),
            None,
        );
        if let value = src.value(v, w, class)
            && !value.is_dynamic()
        {
            st.facts.bindings.push(Binding {
                name: cname,
                value,
                line,
            });
        }
    }
}

/// `url` resolved against a client's base URI: an absolute URL stays, an absolute path keeps
/// only the base's scheme and host, a relative path is joined under the base; a URL that
/// starts with a run-time part, or a base that is one, is left as it is.
fn with_base(base: Value, url: Value) -> Value {
    let Some(Part::Lit(first)) = url.parts.first() else {
        return url;
    };
    if first.contains("://") || first.starts_with("//") || base.is_dynamic() {
        return url;
    }
    let absolute = first.starts_with('/');
    let mut out = match base.as_lit() {
        Some(b) if absolute && b.contains("://") => {
            let i = b.find("://").map_or(0, |i| i + 3);
            let host_end = b[i..].find('/').map_or(b.len(), |p| i + p);
            Value::lit(&b[..host_end])
        }
        _ => base,
    };
    let ends = matches!(out.parts.last(), Some(Part::Lit(s)) if s.ends_with('/'));
    let mut url = url;
    match (ends, absolute) {
        (true, true) => {
            if let Some(Part::Lit(s)) = url.parts.first_mut() {
                s.remove(0);
            }
        }
        (false, false) => out.push(Part::Lit("/".into())),
        _ => {}
    }
    out.extend(url);
    out
}

/// curl: `curl_init($url)` (or `curl_setopt($ch, CURLOPT_URL, $url)`) gives a handle its URL,
/// options its method (`CURLOPT_CUSTOMREQUEST`, `CURLOPT_POST`, …; GET otherwise), and
/// `curl_exec($ch)` is the request, at its own line. `file_get_contents` is a GET when its
/// argument is a web URL (`'http://…'`, a base named like one), not a file path.
fn curl_call(
    src: &Src,
    st: &mut State,
    name: &str,
    ts: usize,
    (open, close): (usize, usize),
    class: Option<&str>,
) {
    let code = src.code();
    let args = src.args(open, close);
    let line = src.line_of(ts);
    let handle = |i: usize| -> Option<String> {
        let &(a, z) = args.positional.get(i)?;
        let (a, z) = src.trim(a, z);
        Chain {
            text: &code[a..z],
            start: a,
        }
        .key()
        .map(str::to_string)
    };
    let option = |r: (usize, usize)| {
        let (a, z) = src.trim(r.0, r.1);
        code[a..z].trim_start_matches('\\').to_string()
    };
    match name {
        "curl_init" => {
            if let Some(k) = assigned_target(src, ts).and_then(|c| c.key().map(str::to_string)) {
                st.curl.insert(
                    k,
                    Curl {
                        url: args.positional.first().copied(),
                        method: None,
                    },
                );
            }
        }
        "curl_setopt" => {
            if let (Some(k), Some(&o), Some(&v)) =
                (handle(0), args.positional.get(1), args.positional.get(2))
            {
                curl_option(src, st.curl.entry(k).or_default(), &option(o), v);
            }
        }
        "curl_setopt_array" => {
            let (Some(k), Some(&(a, z))) = (handle(0), args.positional.get(1)) else {
                return;
            };
            let (a, z) = array_of(src, a, z);
            for (x, y) in src.items(a, z) {
                if let Some(arrow) = code[x..y].find("=>") {
                    let opt = option((x, x + arrow));
                    curl_option(
                        src,
                        st.curl.entry(k.clone()).or_default(),
                        &opt,
                        (x + arrow + 2, y),
                    );
                }
            }
        }
        "curl_exec" => {
            let curl = handle(0)
                .and_then(|k| st.curl.get(&k).cloned())
                .unwrap_or_default();
            let url = match curl.url {
                Some((a, z)) => src.url(a, z, true, class),
                None => Some(Value::dynamic()),
            };
            if let Some(url) = url {
                st.facts.http.push(HttpFact::Call {
                    method: Some(curl.method.unwrap_or_else(|| "GET".to_string())),
                    url,
                    line,
                });
            }
        }
        "file_get_contents" => {
            let Some(&(a, z)) = args.positional.first() else {
                return;
            };
            let url = src.value(a, z, class);
            let web = match url.parts.first() {
                Some(Part::Lit(s)) => s.starts_with("http://") || s.starts_with("https://"),
                Some(p @ (Part::Ref { .. } | Part::Env { .. } | Part::Config { .. })) => {
                    common::looks_like_url(&Value {
                        parts: vec![p.clone()],
                    })
                }
                _ => false,
            };
            if web {
                // A stream context (the third argument) may set another method.
                let method = (args.positional.len() < 3).then(|| "GET".to_string());
                st.facts.http.push(HttpFact::Call { method, url, line });
            }
        }
        _ => {}
    }
}

/// One curl option given to a handle.
fn curl_option(src: &Src, curl: &mut Curl, opt: &str, v: (usize, usize)) {
    let (a, z) = src.trim(v.0, v.1);
    let on = !matches!(
        src.code()[a..z].to_ascii_lowercase().as_str(),
        "false" | "0" | "null"
    );
    let set = |curl: &mut Curl, m: &str| curl.method = Some(m.to_string());
    match opt {
        "CURLOPT_URL" => curl.url = Some((a, z)),
        "CURLOPT_CUSTOMREQUEST" => {
            if let Some(m) = src.plain_string(a, z) {
                curl.method = Some(m.to_ascii_uppercase());
            }
        }
        "CURLOPT_POST" if on => set(curl, "POST"),
        "CURLOPT_PUT" if on => set(curl, "PUT"),
        "CURLOPT_NOBODY" if on => set(curl, "HEAD"),
        "CURLOPT_HTTPGET" if on => set(curl, "GET"),
        "CURLOPT_POSTFIELDS" if curl.method.is_none() => set(curl, "POST"),
        _ => {}
    }
}

/// The array literal at bytes `s..e`, or the one a variable there was assigned.
fn array_of(src: &Src, s: usize, e: usize) -> (usize, usize) {
    let (s, e) = src.trim(s, e);
    let text = &src.code()[s..e];
    if text.starts_with('$') {
        let t = src.t;
        let (a, _) = t.range_of(s, e);
        if let Some(asg) = src.asg.last(text, a)
            && let Some(end) = t.tok(asg.rhs.1.saturating_sub(1))
        {
            return (t.start(asg.rhs.0), end.end as usize);
        }
    }
    (s, e)
}

/// True when the receiver of a call is a router variable: `$app`, `$router`, or one the file
/// made a router (`AppFactory::create()`, a group closure's parameter).
fn is_router(st: &State, chain: &Chain) -> bool {
    if !chain.text.starts_with('$') || chain.text.contains('(') {
        return false;
    }
    chain
        .key()
        .is_some_and(|k| matches!(k, "app" | "router") || st.routers.contains(k))
}

/// `[OrderController::class, 'show']` gives `OrderController@show`; `'C@m'` stays; an
/// invokable `C::class` gives `C`; Lumen's `['uses' => 'C@m']` gives `C@m`; a closure gives
/// nothing.
fn laravel_handler(src: &Src, s: usize, e: usize) -> Option<String> {
    let code = src.code();
    if let Some(v) = src.plain_string(s, e) {
        return Some(v);
    }
    let (s, e) = src.trim(s, e);
    let t = &code[s..e];
    if let Some(c) = t.strip_suffix("::class") {
        return Some(c.rsplit('\\').next().unwrap_or(c).to_string());
    }
    let items = src.items(s, e);
    for &(x, y) in &items {
        if let Some(arrow) = code[x..y].find("=>")
            && src.plain_string(x, x + arrow).as_deref() == Some("uses")
        {
            return src.plain_string(x + arrow + 2, y);
        }
    }
    if items.len() == 2 {
        let c = code[items[0].0..items[0].1].strip_suffix("::class")?;
        let m = src.plain_string(items[1].0, items[1].1)?;
        return Some(format!("{}@{m}", c.rsplit('\\').next().unwrap_or(c)));
    }
    None
}

/// Whether the receiver of `->get(`/`::get(` is an HTTP client: `Some(true)` for the `Http`
/// facade (and its chains) and a variable bound to a Guzzle/Symfony client, `Some(false)` for
/// a name that only says so (`$client`, `$http`), whose argument must then read like a URL.
fn http_receiver(st: &State, chain: &Chain) -> Option<bool> {
    if chain.text.is_empty() {
        return None;
    }
    if matches!(chain.root(), "Http" | "Illuminate\\Support\\Facades\\Http") {
        return Some(true);
    }
    let key = chain.key()?;
    if st.http_clients.contains(key) {
        return Some(true);
    }
    let k = key.to_ascii_lowercase();
    ((k.contains("client") && !st.grpc_clients.contains_key(key))
        || k.contains("http")
        || k.contains("guzzle"))
    .then_some(false)
}

fn push_event(
    src: &Src,
    st: &mut State,
    role: EventRole,
    via: &str,
    s: usize,
    e: usize,
    class: Option<&str>,
) {
    if let Some(topic) = src.topic(s, e, class) {
        common::push_event(&mut st.facts, role, topic, via, src.line_of(s));
    }
}
