//! Ktor routes: the routing DSL `routing { route("/orders") { get("{id}") { … }; post { … } } }`,
//! in `routing { }` or in `Route.x()` extensions. Read only in Kotlin files that import Ktor,
//! so a `get("…") { }` of another DSL is never a route.

use super::recognize::Ctx;
use super::*;

/// The DSL's verb functions.
const VERBS: [&str; 7] = ["get", "post", "put", "delete", "patch", "head", "options"];

impl<'s, 'a> Ctx<'s, 'a> {
    pub(super) fn ktor_routes(&self, facts: &mut FileFacts) {
        let src = self.src;
        if src.dialect != Dialect::Kotlin
            || !facts
                .imports
                .iter()
                .any(|i| i.module.starts_with("io.ktor"))
        {
            return;
        }
        // The open `route("/p") { … }` scopes, innermost last: (close brace, full prefix).
        let mut scopes: Vec<(usize, String)> = Vec::new();
        for k in 0..src.len() {
            while scopes.last().is_some_and(|(end, _)| *end < k) {
                scopes.pop();
            }
            let Some(id) = src.ident(k) else { continue };
            if k > 0 && src.is(k - 1, ".") {
                continue;
            }
            let (path, body) = if src.is(k + 1, "(") {
                let close = src.close_or_end(k + 1);
                let Some(p) = src.plain_str(k + 2).filter(|_| src.is(k + 3, ")")) else {
                    continue;
                };
                (p.into_owned(), close + 1)
            } else {
                (String::new(), k + 1)
            };
            if !src.is(body, "{") {
                continue;
            }
            let prefix = scopes.last().map_or("", |(_, p)| p.as_str());
            if id == "route" && !path.is_empty() {
                let full = common_join(prefix, &path);
                scopes.push((src.close_or_end(body), full));
            } else if VERBS.contains(&id) {
                facts.http.push(HttpFact::Route {
                    method: id.to_ascii_uppercase(),
                    path: common_join(prefix, &path),
                    handler: None,
                    line: src.toks[k].line,
                });
            }
        }
    }
}

/// A Ktor path under a prefix: `"/orders"` + `"{id}"` is `/orders/{id}`, an empty path is the
/// prefix itself (or `/`).
fn common_join(prefix: &str, path: &str) -> String {
    let joined = crate::index::lang::common::join_path(prefix, path);
    if joined.is_empty() {
        "/".to_string()
    } else if joined.starts_with('/') {
        joined
    } else {
        format!("/{joined}")
    }
}

#[cfg(test)]
mod tests {
    use crate::index::facts::HttpFact;

    fn routes(src: &str) -> Vec<(String, String, u32)> {
        crate::index::lang::extract(
            crate::index::facts::Language::Kotlin,
            "src/main/kotlin/Routes.kt",
            src,
        )
        .http
        .into_iter()
        .filter_map(|h| match h {
            HttpFact::Route {
                method, path, line, ..
            } => Some((method, path, line)),
            _ => None,
        })
        .collect()
    }

    #[test]
    fn ktor_routing_dsl_with_nested_routes() {
        let src = r#"package shop
import io.ktor.server.routing.*

fun Application.module() {
    routing {
        route("/orders") {
            get("{id}") { call.respond(HttpStatusCode.OK) }
            post { call.respond(HttpStatusCode.Created) }
            route("/items") {
                delete("/{item}") { }
            }
        }
        get("/health") { call.respondText("ok") }
        val x = map.get("key")
    }
}

fun Route.customers() {
    get("/customers") { }
}
"#;
        let r = |m: &str, p: &str, l: u32| (m.to_string(), p.to_string(), l);
        assert_eq!(
            routes(src),
            vec![
                r("GET", "/orders/{id}", 7),
                r("POST", "/orders", 8),
                r("DELETE", "/orders/items/{item}", 10),
                r("GET", "/health", 13),
                r("GET", "/customers", 19),
            ]
        );
    }

    #[test]
    fn a_get_block_without_ktor_is_no_route() {
        assert!(routes("package x\nfun f() { get(\"/x\") { } }\n").is_empty());
    }
}
