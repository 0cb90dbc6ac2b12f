//! Spring WebFlux / WebMvc functional routes: `route(GET("/pets/{id}"), h::get)
//! .andRoute(POST("/pets"), h::create)`, the builder `route().GET("/owners/{id}", h::owner)`,
//! the Kotlin DSL `coRouter { GET("/x", h::x) }`, and their prefixes (`.path("/api", b -> …)`,
//! `nest(path("/api"), …)`, Kotlin `"/api".nest { … }`). Read only in a file that names the
//! functional API, so a `GET(…)` elsewhere is never a route.

use super::recognize::Ctx;
use super::*;

/// The verbs of `RequestPredicates` and of the route builders and DSLs.
const VERBS: [&str; 7] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

impl<'s, 'a> Ctx<'s, 'a> {
    pub(super) fn functional_routes(&self, facts: &mut FileFacts) {
        let src = self.src;
        let functional = (0..src.len()).any(|k| {
            matches!(
                src.ident(k),
                Some(
                    "RouterFunction"
                        | "RouterFunctions"
                        | "RequestPredicates"
                        | "coRouter"
                        | "router"
                )
            )
        });
        if !functional {
            return;
        }
        let prefixes = self.functional_prefixes();
        for k in 0..src.len() {
            let Some(verb) = src.ident(k).filter(|v| VERBS.contains(v)) else {
                continue;
            };
            if !src.is(k + 1, "(") {
                continue;
            }
            let Some(path) = src.plain_str(k + 2).filter(|p| p.starts_with('/')) else {
                continue;
            };
            let close = src.close_or_end(k + 1);
            let handler = if src.is(k + 3, ",") {
                // The builder or DSL form: `GET("/x", h::x)`.
                method_ref(src, k + 4)
            } else if src.is(k + 3, ")") && src.is(close + 1, ",") {
                // A predicate: `route(GET("/x"), h::x)`.
                method_ref(src, close + 2)
            } else if src.is(k + 3, ")") && src.is(close + 1, "{") {
                // The Kotlin DSL with a lambda: `GET("/x") { … }`.
                None
            } else {
                continue;
            };
            // Joined in place: a join per scope copied the whole prefix each time, cubic in
            // the nesting depth.
            let mut full = String::new();
            for (s, e, p) in &prefixes {
                if *s <= k && k < *e {
                    join_into(&mut full, p);
                }
            }
            join_into(&mut full, &path);
            facts.http.push(HttpFact::Route {
                method: verb.to_string(),
                path: full,
                handler,
                line: src.toks[k].line,
            });
        }
    }

    /// The prefix scopes of the file, outermost first: (first token, end token, prefix).
    fn functional_prefixes(&self) -> Vec<(usize, usize, String)> {
        let src = self.src;
        let mut out = Vec::new();
        for k in 0..src.len() {
            match src.ident(k) {
                // `.path("/api", builder -> …)` and `.nest(path("/api"), …)`.
                Some("path") if src.is(k + 1, "(") => {
                    let Some(p) = src.plain_str(k + 2).filter(|p| p.starts_with('/')) else {
                        continue;
                    };
                    let close = src.close_or_end(k + 1);
                    let scope_end = if src.is(k + 3, ",") {
                        close
                    } else if k >= 2 && src.is(k - 1, "(") && src.is(k - 2, "nest") {
                        src.close_or_end(k - 1)
                    } else {
                        continue;
                    };
                    out.push((k, scope_end, p.into_owned()));
                }
                // Kotlin: `"/api".nest { … }`.
                Some("nest") if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "{") => {
                    if let Some(p) = src.plain_str(k - 2).filter(|p| p.starts_with('/')) {
                        out.push((k, src.close_or_end(k + 1), p.into_owned()));
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// [`join_path`](crate::index::lang::common::join_path) of `prefix` and `path`, into `prefix`.
fn join_into(prefix: &mut String, path: &str) {
    let kept = prefix.trim_end_matches('/').len();
    if kept == 0 {
        path.clone_into(prefix);
    } else {
        prefix.truncate(kept);
        if !path.is_empty() && path != "/" {
            if !path.starts_with('/') {
                prefix.push('/');
            }
            prefix.push_str(path);
        }
    }
}

/// The method a handler argument at `i` names: `h::get`, `this::get`, `handler::get` give
/// `get`; a lambda or anything else gives `None`.
fn method_ref(src: &Src, i: usize) -> Option<String> {
    (src.ident(i).is_some() && src.is(i + 1, ":") && src.is(i + 2, ":"))
        .then(|| src.ident(i + 3))
        .flatten()
        .or_else(|| {
            (src.ident(i).is_some() && src.is(i + 1, "::"))
                .then(|| src.ident(i + 2))
                .flatten()
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use crate::index::facts::HttpFact;

    fn routes(path: &str, src: &str) -> Vec<(String, String, Option<String>, u32)> {
        let lang = crate::index::facts::Language::of_path(path).unwrap();
        crate::index::lang::extract(lang, path, src)
            .http
            .into_iter()
            .filter_map(|h| match h {
                HttpFact::Route {
                    method,
                    path,
                    handler,
                    line,
                } => Some((method, path, handler, line)),
                _ => None,
            })
            .collect()
    }

    fn r(m: &str, p: &str, h: Option<&str>, line: u32) -> (String, String, Option<String>, u32) {
        (m.into(), p.into(), h.map(str::to_string), line)
    }

    #[test]
    fn java_predicates_builders_and_prefixes() {
        let src = r#"package x;
import static org.springframework.web.reactive.function.server.RequestPredicates.GET;
public class Routes {
    public RouterFunction<ServerResponse> routes(PetHandler handler) {
        return route(GET("/pets/{id}"), handler::get)
            .andRoute(POST("/pets"), handler::create);
    }
    public RouterFunction<ServerResponse> owners(OwnerHandler h) {
        return RouterFunctions.route()
            .path("/api", b -> b
                .GET("/owners/{id}", h::owner)
                .POST("/owners", h::newOwner))
            .GET("/health", req -> ok().build())
            .build();
    }
}
"#;
        assert_eq!(
            routes("src/main/java/x/Routes.java", src),
            vec![
                r("GET", "/pets/{id}", Some("get"), 5),
                r("POST", "/pets", Some("create"), 6),
                r("GET", "/api/owners/{id}", Some("owner"), 11),
                r("POST", "/api/owners", Some("newOwner"), 12),
                r("GET", "/health", None, 13),
            ]
        );
    }

    #[test]
    fn kotlin_router_dsl_with_nested_prefixes() {
        let src = r#"package x
fun routes(h: Handler) = coRouter {
    "/api".nest {
        GET("/orders/{id}", h::get)
        POST("/orders") { req -> ok().buildAndAwait() }
    }
    GET("/ping", h::ping)
}
"#;
        assert_eq!(
            routes("src/main/kotlin/x/Routes.kt", src),
            vec![
                r("GET", "/api/orders/{id}", Some("get"), 4),
                r("POST", "/api/orders", None, 5),
                r("GET", "/ping", Some("ping"), 7),
            ]
        );
    }

    #[test]
    fn deep_prefix_nesting_is_joined_once_per_route() {
        // Each scope's join copied the prefix so far: 4 000 nested `.path("/a", b -> b.GET(…)`
        // took 23 s in a debug build (cubic); the prefix is joined in place now.
        let depth = 3000;
        let src = format!(
            "class R {{ RouterFunction r() {{ return route(){} }}}}",
            ".path(\"/a\", b -> b.GET(\"/x\", h::x)".repeat(depth)
        );
        let started = std::time::Instant::now();
        let found = routes("src/main/java/R.java", &src);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
        assert_eq!(found.len(), depth);
        assert_eq!(found[2].1, "/a/a/a/x");
        for (prefix, path) in [
            ("", "/x"),
            ("/", "/x"),
            ("/a/", "/"),
            ("/a", ""),
            ("/a", "x"),
            ("//", ""),
        ] {
            let mut joined = prefix.to_string();
            super::join_into(&mut joined, path);
            assert_eq!(joined, crate::index::lang::common::join_path(prefix, path));
        }
    }

    #[test]
    fn a_get_call_outside_the_functional_api_is_no_route() {
        let src = "package x;\nclass C { void f() { client.GET(\"/x\", y); } }\n";
        assert!(routes("src/main/java/x/C.java", src).is_empty());
    }
}
