//! HTTP routes served: Spring MVC / JAX-RS / Micronaut mapping annotations (with class-level
//! prefixes) and Spring static resource handlers.

use super::recognize::Ctx;
use super::*;

impl<'s, 'a> Ctx<'s, 'a> {
    pub(super) fn http(&self, facts: &mut FileFacts) {
        self.routes(facts);
        self.functional_routes(facts);
        self.ktor_routes(facts);
        self.resource_handlers(facts);
        self.client_calls(facts);
    }

    /// Spring's static resources, `registry.addResourceHandler("/assets/**", "/img/**")`:
    /// each pattern is a `GET` route.
    fn resource_handlers(&self, facts: &mut FileFacts) {
        let src = self.src;
        for k in 1..src.len() {
            if src.ident(k) != Some("addResourceHandler")
                || !src.is(k - 1, ".")
                || !src.is(k + 1, "(")
            {
                continue;
            }
            let close = src.close_or_end(k + 1);
            for (a, b) in src.split_commas(k + 2, close) {
                if let Some(path) = src
                    .plain_str(a)
                    .filter(|p| b == a + 1 && p.starts_with('/'))
                {
                    facts.http.push(HttpFact::Route {
                        method: "GET".into(),
                        path: path.into_owned(),
                        handler: Some("addResourceHandler".into()),
                        line: src.toks[k].line,
                    });
                }
            }
        }
    }

    /// The string values of an annotation attribute (arrays expanded, constants resolved).
    fn ann_strings(&self, ann: &Ann, keys: &[&str]) -> Vec<String> {
        let Some(range) = ann_attr(self.src, ann, keys) else {
            return Vec::new();
        };
        let enclosing = self.model.enclosing_names(ann.at);
        elements(self.src, range)
            .into_iter()
            .filter_map(|r| self.consts.eval(self.src, r, &enclosing))
            .collect()
    }

    /// Route/call paths and verbs a method annotation declares, if it is a mapping annotation.
    fn mapping(&self, ann: &Ann) -> Option<(Vec<String>, Vec<String>)> {
        let src = self.src;
        let verb = |m: &str| m.to_ascii_uppercase();
        let (verbs, path_keys): (Vec<String>, &[&str]) = match ann.name {
            "GetMapping" | "PostMapping" | "PutMapping" | "DeleteMapping" | "PatchMapping" => (
                vec![verb(ann.name.trim_end_matches("Mapping"))],
                &["value", "path"],
            ),
            "GetExchange" | "PostExchange" | "PutExchange" | "DeleteExchange" | "PatchExchange" => {
                (
                    vec![verb(ann.name.trim_end_matches("Exchange"))],
                    &["value", "url"],
                )
            }
            "RequestMapping" | "HttpExchange" => {
                let mut verbs = Vec::new();
                if let Some(r) = ann_attr(src, ann, &["method"]) {
                    for (a, b) in elements(src, r) {
                        if let Some(last) = b
                            .checked_sub(1)
                            .filter(|&l| l >= a)
                            .and_then(|l| src.ident(l))
                        {
                            verbs.push(last.to_ascii_uppercase());
                        } else if let Some(v) = src.plain_str(a) {
                            verbs.push(v.to_ascii_uppercase());
                        }
                    }
                }
                if verbs.is_empty() {
                    verbs.push("ANY".to_string());
                }
                (verbs, &["value", "path", "url"])
            }
            // Micronaut.
            "Get" | "Post" | "Put" | "Delete" | "Patch" | "Head" | "Options" => {
                (vec![verb(ann.name)], &["value", "uri"])
            }
            _ => return None,
        };
        let mut paths = self.ann_strings(ann, path_keys);
        if paths.is_empty() {
            if ann_attr(src, ann, path_keys).is_some() {
                // A path we cannot evaluate: better no route than a wrong one.
                return None;
            }
            paths.push(String::new());
        }
        Some((verbs, paths))
    }

    /// The class-level prefixes written as names of other files (`@RequestMapping(ApiPaths.
    /// ORDERS)`): a [`HttpFact::Prefix`] over the class's lines, for the graph to resolve.
    fn named_prefixes(&self, facts: &mut FileFacts) {
        for t in &self.model.types {
            let client = t.anns.iter().any(|a| {
                matches!(
                    a.name,
                    "FeignClient" | "HttpExchange" | "RegisterRestClient"
                )
            });
            if client {
                continue;
            }
            for a in &t.anns {
                if !matches!(a.name, "RequestMapping" | "Path") {
                    continue;
                }
                let Some(range) = ann_attr(self.src, a, &["value", "path"]) else {
                    continue;
                };
                if !self.ann_strings(a, &["value", "path"]).is_empty() {
                    continue;
                }
                let enclosing = self.model.enclosing_names(a.at);
                let mut values = elements(self.src, range)
                    .into_iter()
                    .filter_map(|r| self.consts.eval_value(self.src, r, &enclosing));
                // One prefix only: several unknown ones would list every route under each.
                if let (Some(prefix), None) = (values.next(), values.next()) {
                    facts.http.push(HttpFact::Prefix {
                        prefix,
                        first: self.src.line(t.span.0),
                        last: self.src.line(t.span.1),
                        line: a.line,
                    });
                }
            }
        }
    }

    fn routes(&self, facts: &mut FileFacts) {
        self.named_prefixes(facts);
        for m in &self.model.methods {
            let owner = m.owner.map(|o| &self.model.types[o]);
            let owner_anns: &[Ann] = owner.map_or(&[], |t| t.anns.as_slice());
            let has = |name: &str| owner_anns.iter().any(|a| a.name == name);
            // Declared clients: Feign, Spring HTTP interfaces, MicroProfile REST client.
            let client = has("FeignClient") || has("HttpExchange") || has("RegisterRestClient");
            let mut prefixes: Vec<String> = Vec::new();
            for a in owner_anns {
                match a.name {
                    "RequestMapping" | "Path" | "HttpExchange" => {
                        prefixes.extend(self.ann_strings(a, &["value", "path", "url"]));
                    }
                    // Micronaut `@Controller("/orders")` (Spring's `@Controller("x")` names a bean).
                    "Controller" => {
                        prefixes.extend(
                            self.ann_strings(a, &["value"])
                                .into_iter()
                                .filter(|p| p.starts_with('/')),
                        );
                    }
                    "FeignClient" => {
                        prefixes.extend(self.ann_strings(a, &["path"]));
                    }
                    _ => {}
                }
            }
            if prefixes.is_empty() {
                prefixes.push(String::new());
            }
            prefixes.truncate(8);
            // JAX-RS / Retrofit verbs and `@Path` on the method.
            let jaxrs_verb = m.anns.iter().find(|a| {
                matches!(
                    a.name,
                    "GET" | "POST" | "PUT" | "DELETE" | "PATCH" | "HEAD" | "OPTIONS"
                )
            });
            let mut found: Vec<(String, Vec<String>, u32)> = Vec::new();
            if let Some(v) = jaxrs_verb {
                if v.args.is_some() {
                    // Retrofit `@GET("orders/{id}")`: a declared call.
                    for p in self.ann_strings(v, &["value"]) {
                        let p = if p.starts_with('/') || p.contains("://") {
                            p
                        } else {
                            format!("/{p}")
                        };
                        if looks_like_http_path(&p)
                            && let Some(path) = http_path_of(&p)
                        {
                            facts.http.push(HttpFact::Call {
                                method: Some(v.name.to_string()),
                                url: Value::lit(path),
                                line: v.line,
                            });
                        }
                    }
                    continue;
                }
                let paths = m
                    .anns
                    .iter()
                    .find(|a| a.name == "Path")
                    .map_or_else(|| vec![String::new()], |p| self.ann_strings(p, &["value"]));
                found.push((v.name.to_string(), paths, v.line));
            }
            for a in &m.anns {
                if let Some((verbs, paths)) = self.mapping(a) {
                    for v in verbs {
                        found.push((v, paths.clone(), a.line));
                    }
                }
                if a.name == "RequestLine" {
                    // OpenFeign `@RequestLine("GET /orders/{id}")`.
                    for s in self.ann_strings(a, &["value"]) {
                        if let Some((verb, p)) = s.split_once(' ')
                            && let Some(path) = http_path_of(p.trim())
                        {
                            facts.http.push(HttpFact::Call {
                                method: Some(verb.to_ascii_uppercase()),
                                url: Value::lit(path),
                                line: a.line,
                            });
                        }
                    }
                }
            }
            for (verb, paths, line) in found {
                for prefix in &prefixes {
                    for p in &paths {
                        let path = join_paths(prefix, p);
                        if client {
                            let full = if let Some(url) = feign_url(self, owner_anns) {
                                join_paths(&url, &path)
                            } else {
                                path
                            };
                            if let Some(path) = http_path_of(&full) {
                                facts.http.push(HttpFact::Call {
                                    method: (verb != "ANY").then(|| verb.clone()),
                                    url: Value::lit(path),
                                    line,
                                });
                            }
                        } else {
                            facts.http.push(HttpFact::Route {
                                method: verb.clone(),
                                path,
                                handler: Some(m.name.to_string()),
                                line,
                            });
                        }
                    }
                }
            }
        }
    }
}

/// The literal base URL of a declared client (`@FeignClient(url = "http://x/api")`).
fn feign_url(cx: &Ctx, anns: &[Ann]) -> Option<String> {
    let a = anns.iter().find(|a| a.name == "FeignClient")?;
    let url = cx.ann_strings(a, &["url"]).into_iter().next()?;
    (url.contains("://") || url.starts_with('/')).then_some(url)
}

/// Joins a class-level prefix and a method path with exactly one `/` between them.
fn join_paths(prefix: &str, path: &str) -> String {
    let p = prefix.trim_end_matches('/');
    let q = path.trim_start_matches('/');
    let mut out = String::with_capacity(p.len() + q.len() + 2);
    if !p.is_empty() && !p.starts_with('/') && !p.contains("://") {
        out.push('/');
    }
    out.push_str(p);
    if !q.is_empty() || out.is_empty() {
        out.push('/');
    }
    out.push_str(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join() {
        for (prefix, path, want) in [
            ("/orders", "/{id}", "/orders/{id}"),
            ("/orders/", "", "/orders"),
            ("", "", "/"),
            ("api", "x", "/api/x"),
        ] {
            assert_eq!(join_paths(prefix, path), want, "{prefix:?} + {path:?}");
        }
    }
}
