//! HTTP calls made: RestTemplate, WebClient, `java.net.http`, OkHttp, Apache, Ktor and
//! Kiota-style fluent clients, with the URL each call's argument evaluates to.

use super::recognize::{Ctx, Held};
use super::*;

/// A client method or constructor named at token `k`, called: its bracket (`open`..`close`),
/// first argument and line.
#[derive(Clone, Copy)]
struct CallSite<'a> {
    k: usize,
    name: &'a str,
    open: usize,
    close: usize,
    first_arg: Option<(usize, usize)>,
    line: u32,
}

/// Appends one client call when its URL is known.
fn push(facts: &mut FileFacts, method: Option<&str>, url: Option<Value>, line: u32) {
    if let Some(url) = url {
        facts.http.push(HttpFact::Call {
            method: method.map(str::to_string),
            url,
            line,
        });
    }
}

impl<'s, 'a> Ctx<'s, 'a> {
    /// The path of the URL argument `a..b`: literal parts concatenated with `+` (other parts
    /// become `{}`, a leading base URL variable is dropped), else the first path-like literal
    /// inside it.
    /// The URL of an HTTP client call's argument, read by the shared evaluator with the
    /// file's assignments (`restTemplate.getForObject(url, …)` with `url` a parameter is a
    /// call whose URL is run-time: kept, so the graph lists it as unresolved).
    fn url_path(&self, range: (usize, usize)) -> Option<Value> {
        let (a, b) = range;
        if a >= b {
            return None;
        }
        let src = self.src;
        // A URI builder lambda: `b -> b.path("/orders/{id}").build(id)` (Kotlin
        // `{ it.path(…) }`): the URL is the `.path(…)` arguments.
        let lambda = (src.ident(a).is_some() && src.is(a + 1, "->"))
            || src.is(a, "{")
            || (src.is(a, "(") && src.close(a).is_some_and(|c| src.is(c + 1, "->")))
            || (a..b.min(a + 64))
                .any(|j| src.is(j, ".") && src.kw(j + 1, "path") && src.is(j + 2, "("))
                && (a..b.min(a + 64)).any(|j| src.is(j, ".") && src.kw(j + 1, "build"));
        if lambda {
            let mut v = Value::default();
            for j in a..b {
                if src.is(j, ".")
                    && matches!(src.ident(j + 1), Some("path" | "pathSegment"))
                    && src.is(j + 2, "(")
                    && let Some(arg) = src.first_arg(j + 2)
                {
                    v.extend(eval(src, arg, self.rules, &self.asg));
                }
            }
            return (!v.parts.is_empty()).then_some(v);
        }
        Some(eval(src, (a, b), self.rules, &self.asg))
    }

    /// Kiota-style fluent request builders: `client.catalog().products().byProductId(id).get()`
    /// is `GET /catalog/products/{}` — each call without arguments a path segment, each
    /// `byX(arg)` a parameter, the verb last; the chain starts at a name holding a client.
    fn fluent_request(&self, verb_at: usize) -> Option<(String, Value)> {
        let src = self.src;
        let verb = src.ident(verb_at)?;
        let method = match verb {
            "get" | "post" | "put" | "delete" | "patch" => verb.to_ascii_uppercase(),
            _ => return None,
        };
        let mut segs: Vec<Option<&str>> = Vec::new();
        let mut k = verb_at.checked_sub(1)?;
        // Walk back over `.name(args)` links.
        loop {
            if !src.is(k, ".") {
                break;
            }
            let close = k.checked_sub(1)?;
            if !src.is(close, ")") {
                // The chain's root: a name (`catalogClient`, `this.client`).
                let root = src.ident(close)?;
                let lower = root.to_ascii_lowercase();
                if !(lower.ends_with("client") || lower.ends_with("api")) || segs.is_empty() {
                    return None;
                }
                break;
            }
            let open = src.open_of(close)?;
            let name = src.ident(open.checked_sub(1)?)?;
            let empty = open + 1 == close;
            if let Some(rest) = name
                .strip_prefix("by")
                .filter(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
            {
                let _ = rest;
                segs.push(None);
            } else if empty && name.bytes().next().is_some_and(|c| c.is_ascii_lowercase()) {
                segs.push(Some(name));
            } else {
                return None;
            }
            k = open.checked_sub(2)?;
            if segs.len() > 12 {
                return None;
            }
        }
        segs.reverse();
        // The client's name often names the service (`catalogClient`): a host hint.
        let root = src.ident(k.saturating_sub(1)).unwrap_or("");
        let mut url = Value::default();
        if !root.is_empty() {
            url.push(Part::Ref {
                name: root.to_string(),
                default: None,
            });
        }
        for seg in segs {
            match seg {
                Some(s) => url.push(Part::Lit(format!("/{s}"))),
                None => {
                    url.push(Part::Lit("/".into()));
                    url.push(Part::Dynamic);
                }
            }
        }
        Some((method, url))
    }

    /// Client calls: a name among the known client methods and constructors, called, is
    /// read as a template call on its receiver, a fluent request, or a built request.
    pub(super) fn client_calls(&self, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        for k in 0..n {
            let Some(name) = src.ident(k) else { continue };
            if !matches!(
                name,
                "getForObject"
                    | "getForEntity"
                    | "postForObject"
                    | "postForEntity"
                    | "postForLocation"
                    | "patchForObject"
                    | "headForHeaders"
                    | "optionsForAllow"
                    | "put"
                    | "delete"
                    | "exchange"
                    | "execute"
                    | "uri"
                    | "get"
                    | "post"
                    | "patch"
                    | "head"
                    | "options"
                    | "newBuilder"
                    | "Builder"
                    | "HttpGet"
                    | "HttpPost"
                    | "HttpPut"
                    | "HttpDelete"
                    | "HttpPatch"
                    | "HttpHead"
            ) {
                continue;
            }
            let dotted = k >= 1 && (src.is(k - 1, ".") || src.is(k - 1, "?."));
            let open = src.skip_generics(k + 1);
            // Kotlin trailing lambda: `.uri { it.path("/orders/{id}").build(id) }`.
            let lambda = name == "uri" && src.is(open, "{");
            if !src.is(open, "(") && !lambda {
                continue;
            }
            let close = src.close_or_end(open);
            let first_arg = if lambda {
                Some((open + 1, close))
            } else {
                src.first_arg(open)
            };
            let line = src.toks[k].line;
            let site = CallSite {
                k,
                name,
                open,
                close,
                first_arg,
                line,
            };
            if dotted && self.receiver_call(&site, facts) {
                continue;
            }
            if dotted && let Some((method, url)) = self.fluent_request(k) {
                push(facts, Some(&method), Some(url), line);
                continue;
            }
            self.built_request(&site, dotted, facts);
        }
    }

    /// A call on a receiver (`recv.name(…)`): RestTemplate, WebClient / RestClient `.uri(…)`,
    /// Ktor / Vert.x clients. False when the call is none of them.
    fn receiver_call(&self, site: &CallSite<'a>, facts: &mut FileFacts) -> bool {
        let src = self.src;
        let CallSite {
            k,
            name,
            open,
            close,
            first_arg,
            line,
        } = *site;
        let recv = k.checked_sub(2).and_then(|r| src.ident(r)).unwrap_or("");
        let recv_lower = recv.to_ascii_lowercase();
        let rest_template =
            self.held.get(recv) == Some(&Held::RestTemplate) || recv_lower.contains("resttemplate");
        let rt_method = match name {
            "getForObject" | "getForEntity" => Some("GET"),
            "postForObject" | "postForEntity" | "postForLocation" => Some("POST"),
            "patchForObject" => Some("PATCH"),
            "headForHeaders" => Some("HEAD"),
            "optionsForAllow" => Some("OPTIONS"),
            "put" if rest_template => Some("PUT"),
            "delete" if rest_template => Some("DELETE"),
            "exchange" | "execute" if rest_template => Some(""),
            _ => None,
        };
        if let Some(mut method) = rt_method {
            if method.is_empty() {
                method = self.http_method_arg(open + 1, close).unwrap_or("");
            }
            let path = first_arg.and_then(|r| self.url_path(r));
            push(facts, (!method.is_empty()).then_some(method), path, line);
            return true;
        }
        if name == "uri" {
            // WebClient / RestClient: `.get().uri("/orders/{id}")`,
            // `.method(HttpMethod.GET).uri(…)`.
            let verb = k.checked_sub(2).and_then(|p| {
                if !src.is(p, ")") {
                    return None;
                }
                let o = src.open_of(p)?;
                let m = src.ident(o.checked_sub(1)?)?;
                if !src.is(o.checked_sub(2)?, ".") {
                    return None;
                }
                let verb_line = src.line(o - 1);
                match m {
                    "get" | "post" | "put" | "delete" | "patch" | "head" | "options" => {
                        Some((m, verb_line))
                    }
                    "method" => self.http_method_arg(o + 1, p).map(|v| (v, verb_line)),
                    _ => None,
                }
            });
            if let Some((verb, verb_line)) = verb {
                // The site is the verb's call (`.get()`), the call's method name.
                let path = first_arg.and_then(|r| self.url_path(r));
                push(facts, Some(&verb.to_ascii_uppercase()), path, verb_line);
            }
            return true;
        }
        // Ktor / Vert.x clients: `client.get("http://…/orders")`.
        if matches!(
            name,
            "get" | "post" | "put" | "delete" | "patch" | "head" | "options"
        ) && recv_lower.ends_with("client")
            && !rest_template
        {
            let path = src
                .split_commas(open + 1, close)
                .into_iter()
                .find_map(|r| self.url_path(r).filter(looks_like_url));
            push(facts, Some(&name.to_ascii_uppercase()), path, line);
            return true;
        }
        false
    }

    /// A request built, not called on a client: `HttpRequest.newBuilder(…)`, OkHttp
    /// `Request.Builder()`, Apache `new HttpGet(…)`.
    fn built_request(&self, site: &CallSite<'a>, dotted: bool, facts: &mut FileFacts) {
        let src = self.src;
        let CallSite {
            k,
            name,
            close,
            first_arg,
            line,
            ..
        } = *site;
        match name {
            // `HttpRequest.newBuilder(URI.create("http://…/x"))…POST(…)`,
            // OkHttp `Request.Builder().url("…").post(…)`.
            "newBuilder" if k >= 2 && src.kw(k - 2, "HttpRequest") => {
                let end = self.statement_end(k);
                let path = first_arg
                    .and_then(|r| self.url_path(r))
                    .or_else(|| self.chained_arg(close + 1, end, "uri"));
                let method = self.chained_verb(close + 1, end, true);
                push(facts, method, path, line);
            }
            "Builder" if k >= 2 && src.kw(k - 2, "Request") => {
                let end = self.statement_end(k);
                let path = self.chained_arg(close + 1, end, "url");
                let method = self.chained_verb(close + 1, end, false);
                push(facts, method, path, line);
            }
            "HttpGet" | "HttpPost" | "HttpPut" | "HttpDelete" | "HttpPatch" | "HttpHead"
                if !dotted =>
            {
                let path = first_arg.and_then(|r| self.url_path(r));
                // The site is where the request is executed (`httpClient.execute(post)`),
                // when the file executes it; else where it is built.
                let sent = self
                    .asg
                    .holding(k)
                    .and_then(|a| Assignments::sent_at(src, a, &["execute", "executeOpen"]));
                let line = sent.map_or(line, |s| src.line(s));
                push(facts, Some(&name[4..].to_ascii_uppercase()), path, line);
            }
            _ => {}
        }
    }

    /// `HttpMethod.GET` (or `"GET"`) among the tokens `a..b`.
    fn http_method_arg(&self, a: usize, b: usize) -> Option<&'static str> {
        let src = self.src;
        (a..b.min(src.len()).min(a + 256)).find_map(|j| {
            let verb = if src.kw(j, "HttpMethod") && src.is(j + 1, ".") {
                src.ident(j + 2)?
            } else {
                return None;
            };
            const VERBS: [&str; 7] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
            VERBS.iter().copied().find(|v| v.eq_ignore_ascii_case(verb))
        })
    }

    /// The URL path of the first `.name(arg)` call in `a..end` (unwrapping `URI.create(…)`).
    fn chained_arg(&self, a: usize, end: usize, name: &str) -> Option<Value> {
        let src = self.src;
        (a..end).find_map(|j| {
            if !(src.is(j, ".") && src.kw(j + 1, name) && src.is(j + 2, "(")) {
                return None;
            }
            let close = src.close_or_end(j + 2);
            self.url_path((j + 3, close))
        })
    }

    /// The HTTP verb set by a chained `.GET()`/`.POST(…)` (JDK) or `.get()`/`.post(…)` (OkHttp)
    /// call in `a..end`.
    fn chained_verb(&self, a: usize, end: usize, upper: bool) -> Option<&'static str> {
        let src = self.src;
        const VERBS: [&str; 6] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"];
        (a..end).find_map(|j| {
            if !src.is(j, ".") || !src.is(j + 2, "(") {
                return None;
            }
            let m = src.ident(j + 1)?;
            if m == "method" {
                let v = src.plain_str(j + 3)?;
                return VERBS.iter().copied().find(|x| x.eq_ignore_ascii_case(&v));
            }
            VERBS.iter().copied().find(|v| {
                if upper {
                    *v == m
                } else {
                    v.eq_ignore_ascii_case(m) && m.bytes().all(|b| b.is_ascii_lowercase())
                }
            })
        })
    }
}
