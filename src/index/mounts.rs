//! Routers mounted from another module: `app.use('/users', usersRouter)` with the router
//! imported from `./routes/users`, FastAPI `app.include_router(items.router, prefix="/items")`,
//! Flask `register_blueprint(bp, url_prefix=…)`. The extractors see one file at a time, so the
//! mounting file records a [`HttpFact::Mount`] and the graph prefixes the routes of the file the
//! router comes from, following chains of mounts (an app mounting a router that mounts another).

use std::collections::HashMap;
use std::sync::Arc;

use super::facts::{HttpFact, Language, Value};
use super::resolve::{Resolved, Resolver, Seg};
use super::snapshot::FileEntry;

/// How many mounts deep a chain is followed.
const MAX_DEPTH: usize = 8;

/// The most prefixes one file's routes are listed under (a router mounted in many places).
const MAX_PREFIXES: usize = 16;

/// For each file whose routes are mounted from another file, the full prefixes they are
/// served under (`/api/users`); a file mounted nowhere is absent and keeps its paths.
pub fn route_prefixes(files: &[Arc<FileEntry>], resolver: &Resolver) -> HashMap<u32, Vec<String>> {
    // mounted file → (mounting file, prefix), in file and line order.
    let mut into: HashMap<u32, Vec<(u32, &str)>> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        let Some(facts) = f.extra.as_deref() else {
            continue;
        };
        for h in &facts.http {
            let HttpFact::Mount { prefix, router, .. } = h else {
                continue;
            };
            for target in resolver.module_files(fi as u32, router) {
                if target != fi as u32 {
                    into.entry(target).or_default().push((fi as u32, prefix));
                }
            }
        }
    }
    let mut out = HashMap::new();
    let mut targets: Vec<u32> = into.keys().copied().collect();
    targets.sort_unstable();
    for t in targets {
        let has_routes = files[t as usize]
            .extra
            .as_deref()
            .is_some_and(|f| f.http.iter().any(|h| matches!(h, HttpFact::Route { .. })));
        if !has_routes {
            continue;
        }
        let prefixes = prefixes_of(t, &into, &mut vec![t]);
        if !prefixes.is_empty() {
            out.insert(t, prefixes);
        }
    }
    out
}

/// The Spring Boot properties that put a prefix in front of every route of the application.
const SERVLET_PREFIX_KEYS: [&str; 3] = [
    "server.servlet.context-path",
    "spring.webflux.base-path",
    "spring.mvc.servlet.path",
];

/// Application-wide route prefixes, per root: what the code sets ([`HttpFact::AppPrefix`]:
/// NestJS `setGlobalPrefix`, ASP.NET `UsePathBase`) for the routes of its own language, and
/// Spring Boot's context path (`server.servlet.context-path` in the root's property files)
/// for its JVM routes.
#[derive(Debug, Default)]
pub struct AppPrefixes {
    by_root: HashMap<(u16, u8), String>,
}

impl AppPrefixes {
    /// Reads the application prefixes of every root of `files`.
    pub fn new(files: &[Arc<FileEntry>], resolver: &Resolver) -> AppPrefixes {
        let mut by_root = HashMap::new();
        let mut jvm_roots: Vec<(u16, u32)> = Vec::new();
        for (fi, f) in files.iter().enumerate() {
            let Some(facts) = f.extra.as_deref() else {
                continue;
            };
            let family = family(f.lang);
            if family == JVM
                && !jvm_roots.iter().any(|&(r, _)| r == f.root)
                && facts
                    .http
                    .iter()
                    .any(|h| matches!(h, HttpFact::Route { .. }))
            {
                jvm_roots.push((f.root, fi as u32));
            }
            for h in &facts.http {
                if let HttpFact::AppPrefix { prefix, .. } = h {
                    let text = shown_prefix(&resolver.resolve(fi as u32, prefix));
                    by_root.entry((f.root, family)).or_insert(text);
                }
            }
        }
        for (root, fi) in jvm_roots {
            for key in SERVLET_PREFIX_KEYS {
                let value = Value::env(key, None);
                if let Some(text) = resolver.resolve(fi, &value).text()
                    && !text.trim_matches('/').is_empty()
                {
                    by_root.entry((root, JVM)).or_insert(text);
                    break;
                }
            }
        }
        AppPrefixes { by_root }
    }

    /// The prefix every route of `f` is served under, if its application sets one.
    pub fn of(&self, f: &FileEntry) -> Option<&str> {
        self.by_root
            .get(&(f.root, family(f.lang)))
            .map(String::as_str)
    }
}

const JVM: u8 = 1;

/// Languages that make one application together: a prefix set in one applies to the others'
/// routes (a NestJS app in TypeScript and JavaScript files, a Spring app in Java and Kotlin).
fn family(lang: Language) -> u8 {
    match lang {
        Language::Java | Language::Kotlin | Language::Scala => JVM,
        Language::TypeScript | Language::JavaScript => 2,
        Language::CSharp => 3,
        other => 10 + other as u8,
    }
}

/// A resolved prefix as text, a part that does not resolve kept as `{name}` (so a route
/// still shows, and matches, where its prefix is unknown).
pub fn shown_prefix(r: &Resolved) -> String {
    let mut text = String::new();
    for s in &r.segs {
        match s {
            Seg::Lit(t) => text.push_str(t),
            Seg::Hole { name: Some(n), .. } => {
                text.push('{');
                text.push_str(n);
                text.push('}');
            }
            Seg::Hole { name: None, .. } => text.push_str("{}"),
        }
    }
    text
}

/// The full prefixes file `b` is served under: `""` when nothing mounts it, else each mount's
/// prefix joined under the prefixes of the file that mounts it. A mount that closes a cycle
/// (through a file already on `stack`) or goes deeper than [`MAX_DEPTH`] adds nothing, so a
/// file reached only that way gets no prefix at all.
fn prefixes_of(b: u32, into: &HashMap<u32, Vec<(u32, &str)>>, stack: &mut Vec<u32>) -> Vec<String> {
    let Some(edges) = into.get(&b) else {
        return vec![String::new()];
    };
    let mut out: Vec<String> = Vec::new();
    for &(a, prefix) in edges {
        if stack.contains(&a) || stack.len() >= MAX_DEPTH {
            continue;
        }
        stack.push(a);
        let above = prefixes_of(a, into, stack);
        stack.pop();
        for q in above {
            let p = join_route_path(&q, prefix);
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if out.len() >= MAX_PREFIXES {
            out.truncate(MAX_PREFIXES);
            break;
        }
    }
    out
}

/// `"/api"` + `"/users/:id"` gives `/api/users/:id`; `"/api"` + `"/"` gives `/api`, as
/// Express and FastAPI serve a router's root at the mount point.
pub fn join_route_path(prefix: &str, path: &str) -> String {
    let prefix = prefix.trim_end_matches('/');
    let path = if path == "/" { "" } else { path };
    rooted(if path.is_empty() || path.starts_with('/') {
        format!("{prefix}{path}")
    } else {
        format!("{prefix}/{path}")
    })
}

/// `path` starting with `/` (one put in front when it has none): how a joined route is served.
pub fn rooted(path: String) -> String {
    if path.starts_with('/') {
        path
    } else {
        format!("/{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::Language;
    use crate::index::lang::extract;
    use crate::index::snapshot::Snapshot;

    /// The (method, path, file) of every route the graph serves, sorted.
    fn served(files: &[(&str, &str)]) -> Vec<(String, String, String)> {
        let snap = Snapshot::from_facts(
            files
                .iter()
                .map(|(path, text)| {
                    let lang = Language::of_path(path).unwrap();
                    ("svc", *path, extract(lang, path, text))
                })
                .collect(),
        );
        let mut out: Vec<(String, String, String)> = snap
            .graph
            .routes
            .iter()
            .map(|r| {
                let file = snap.files[r.at.file as usize].path.to_string();
                (r.method.clone(), r.path.clone(), file)
            })
            .collect();
        out.sort();
        out
    }

    fn row(m: &str, p: &str, f: &str) -> (String, String, String) {
        (m.into(), p.into(), f.into())
    }

    #[test]
    fn django_url_patterns_and_included_modules() {
        let root = r#"from django.urls import path, re_path, include
from . import views

urlpatterns = [
    path("orders/<int:order_id>/", views.order_detail, name="order-detail"),
    path("orders/", views.OrderList.as_view()),
    re_path(r"^legacy/(?P<pk>[0-9]+)/$", views.legacy),
    re_path(r"^any/.*$", views.anything),
    path("api/", include("shop.api_urls")),
]
"#;
        let api = r#"from django.urls import path
from . import views

urlpatterns = [
    path("carts/", views.carts),
]
"#;
        let not_django = r#"import os

def f():
    return path("x/", g)
"#;
        assert_eq!(
            served(&[
                ("shop/urls.py", root),
                ("shop/api_urls.py", api),
                ("shop/other.py", not_django),
            ]),
            vec![
                row("ANY", "/api/carts/", "shop/api_urls.py"),
                row("ANY", "/legacy/<pk>/", "shop/urls.py"),
                row("ANY", "/orders/", "shop/urls.py"),
                row("ANY", "/orders/<int:order_id>/", "shop/urls.py"),
            ]
        );
    }

    #[test]
    fn class_prefixes_named_by_constants_of_other_files_are_resolved() {
        let paths = "package shop.api;\n\
public final class ApiPaths {\n\
    public static final String BASE = \"/api/v1\";\n\
    public static final String ORDERS = BASE + \"/orders\";\n\
}\n";
        let orders = "package shop.orders;\n\
import shop.api.ApiPaths;\n\
@RestController\n\
@RequestMapping(ApiPaths.ORDERS)\n\
public class OrderController {\n\
    @GetMapping(\"/{id}\")\n\
    public Order get(@PathVariable String id) { return null; }\n\
    @PostMapping\n\
    public Order create(@RequestBody Order o) { return o; }\n\
}\n";
        let unknown = "package shop.carts;\n\
@RestController\n\
@RequestMapping(value = Routes.CARTS)\n\
public class CartController {\n\
    @GetMapping(\"/{id}\")\n\
    public Cart get(String id) { return null; }\n\
}\n";
        let local = "package shop.items;\n\
@RestController\n\
@RequestMapping(ItemController.BASE)\n\
public class ItemController {\n\
    static final String BASE = \"/items\";\n\
    @GetMapping(\"/{id}\")\n\
    public Item get(String id) { return null; }\n\
}\n";
        assert_eq!(
            served(&[
                ("api/ApiPaths.java", paths),
                ("orders/OrderController.java", orders),
                ("carts/CartController.java", unknown),
                ("items/ItemController.java", local),
            ]),
            vec![
                row("GET", "/api/v1/orders/{id}", "orders/OrderController.java"),
                row("GET", "/items/{id}", "items/ItemController.java"),
                row("GET", "/{Routes.CARTS}/{id}", "carts/CartController.java"),
                row("POST", "/api/v1/orders", "orders/OrderController.java"),
            ]
        );
    }

    #[test]
    fn csharp_controller_routes_named_by_constants_of_other_files_are_resolved() {
        let routes = "namespace Shop.Api;\n\
public static class ApiRoutes\n\
{\n\
    public const string Root = \"api/v2\";\n\
    public const string Orders = Root + \"/orders\";\n\
}\n";
        let orders = "using Shop.Api;\n\
namespace Shop.Orders;\n\
[ApiController]\n\
[Route(ApiRoutes.Orders)]\n\
public class OrdersController : ControllerBase\n\
{\n\
    [HttpGet(\"{id}\")]\n\
    public IActionResult Get(int id) => Ok();\n\
    [HttpPost]\n\
    public IActionResult Create() => Ok();\n\
}\n";
        assert_eq!(
            served(&[
                ("Api/ApiRoutes.cs", routes),
                ("Orders/OrdersController.cs", orders)
            ]),
            vec![
                row("GET", "/api/v2/orders/{id}", "Orders/OrdersController.cs"),
                row("POST", "/api/v2/orders", "Orders/OrdersController.cs"),
            ]
        );
    }

    #[test]
    fn application_prefixes_apply_to_every_route_of_their_application() {
        let main = "import { NestFactory } from '@nestjs/core';\n\
async function bootstrap() {\n\
  const app = await NestFactory.create(AppModule);\n\
  app.setGlobalPrefix('api');\n\
  await app.listen(3000);\n\
}\n";
        let controller = "import { Controller, Get } from '@nestjs/common';\n\
@Controller('orders')\n\
export class OrdersController {\n\
  @Get(':id')\n\
  find() {}\n\
}\n";
        let program = "var app = builder.Build();\n\
app.UsePathBase(\"/basket-api\");\n\
app.MapGet(\"/items/{id}\", (int id) => id);\n";
        let props = "server.port=8080\nserver.servlet.context-path=/catalog\n";
        let spring = "package shop;\n\
@RestController\n\
@RequestMapping(\"/products\")\n\
public class ProductController {\n\
    @GetMapping(\"/{id}\")\n\
    public Product get(String id) { return null; }\n\
}\n";
        let plain = "package other;\n\
@RestController\n\
public class PingController {\n\
    @GetMapping(\"/ping\")\n\
    public String ping() { return \"pong\"; }\n\
}\n";
        let snap = Snapshot::from_facts(vec![
            (
                "nest",
                "src/main.ts",
                extract(Language::TypeScript, "src/main.ts", main),
            ),
            (
                "nest",
                "src/orders.controller.ts",
                extract(Language::TypeScript, "src/orders.controller.ts", controller),
            ),
            (
                "basket",
                "Program.cs",
                extract(Language::CSharp, "Program.cs", program),
            ),
            (
                "catalog",
                "src/main/resources/application.properties",
                extract(
                    Language::Properties,
                    "src/main/resources/application.properties",
                    props,
                ),
            ),
            (
                "catalog",
                "src/main/java/shop/ProductController.java",
                extract(Language::Java, "ProductController.java", spring),
            ),
            (
                "ping",
                "src/main/java/other/PingController.java",
                extract(Language::Java, "PingController.java", plain),
            ),
        ]);
        let mut got: Vec<(String, String)> = snap
            .graph
            .routes
            .iter()
            .map(|r| (r.method.clone(), r.path.clone()))
            .collect();
        got.sort();
        let want: Vec<(String, String)> = [
            ("GET", "/api/orders/:id"),
            ("GET", "/basket-api/items/{id}"),
            ("GET", "/catalog/products/{id}"),
            ("GET", "/ping"),
        ]
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn express_routers_of_other_modules_take_the_mount_prefix() {
        let app = "const express = require('express');\n\
const users = require('./routes/users');\n\
import orders from './routes/orders';\n\
const auth = require('./auth');\n\
const app = express();\n\
app.use('/api', auth);\n\
app.use('/api/users', users);\n\
app.use('/api/orders', orders);\n\
app.use('/health', require('./routes/health'));\n";
        let users = "const router = require('express').Router();\n\
router.get('/:id', (req, res) => res.json({}));\n\
router.post('/', (req, res) => res.json({}));\n\
module.exports = router;\n";
        let orders = "import { Router } from 'express';\n\
const router = Router();\n\
router.get('/', list);\n\
export default router;\n";
        let health =
            "const r = require('express').Router();\nr.get('/', ok);\nmodule.exports = r;\n";
        let auth = "module.exports = (req, res, next) => next();\n";
        assert_eq!(
            served(&[
                ("app.js", app),
                ("routes/users.js", users),
                ("routes/orders.ts", orders),
                ("routes/health.js", health),
                ("auth.js", auth),
            ]),
            vec![
                row("GET", "/api/orders", "routes/orders.ts"),
                row("GET", "/api/users/:id", "routes/users.js"),
                row("GET", "/health", "routes/health.js"),
                row("POST", "/api/users", "routes/users.js"),
            ]
        );
    }

    #[test]
    fn fastapi_and_flask_routers_of_other_modules_take_the_mount_prefix() {
        let main = "from fastapi import FastAPI\n\
from routers import items\n\
from app.api.routes import api_router\n\
app = FastAPI()\n\
app.include_router(items.router, prefix=\"/items\")\n\
app.include_router(api_router, prefix=\"/api/v1\")\n";
        let items = "from fastapi import APIRouter\nrouter = APIRouter()\n\n\
@router.get(\"/{item_id}\")\ndef read_item(item_id: int):\n    return {}\n";
        let api = "from fastapi import APIRouter\napi_router = APIRouter(prefix=\"/users\")\n\n\
@api_router.post(\"/\")\ndef create():\n    return {}\n";
        let flask = "from flask import Flask\nfrom views import bp\napp = Flask(__name__)\n\
app.register_blueprint(bp, url_prefix=\"/shop\")\n";
        let views = "from flask import Blueprint\nbp = Blueprint(\"shop\", __name__)\n\n\
@bp.route(\"/cart\", methods=[\"POST\"])\ndef cart():\n    return \"\"\n";
        assert_eq!(
            served(&[
                ("backend/main.py", main),
                ("backend/routers/items.py", items),
                ("backend/app/api/routes.py", api),
                ("shop/app.py", flask),
                ("shop/views.py", views),
            ]),
            vec![
                row("GET", "/items/{item_id}", "backend/routers/items.py"),
                // FastAPI joins a router prefix and `"/"` as written: `/users/`.
                row("POST", "/api/v1/users/", "backend/app/api/routes.py"),
                row("POST", "/shop/cart", "shop/views.py"),
            ]
        );
    }

    #[test]
    fn routers_imported_under_another_name_take_the_mount_prefix() {
        let app = "import express from 'express';\n\
import { router as ordersRouter } from './routes/orders';\n\
const { router: usersRouter } = require('./routes/users');\n\
const app = express();\n\
app.use('/orders', ordersRouter);\n\
app.use('/users', usersRouter);\n";
        let orders = "import { Router } from 'express';\nexport const router = Router();\nrouter.get('/:id', h);\n";
        let users = "const router = require('express').Router();\nrouter.post('/', h);\nmodule.exports = { router };\n";
        let main = "from fastapi import FastAPI\n\
from api.items import router as items_router\n\
app = FastAPI()\n\
app.include_router(items_router, prefix=\"/items\")\n";
        let items = "from fastapi import APIRouter\nrouter = APIRouter()\n\n\
@router.get(\"/{item_id}\")\ndef read_item(item_id: int):\n    return {}\n";
        assert_eq!(
            served(&[
                ("app.ts", app),
                ("routes/orders.ts", orders),
                ("routes/users.js", users),
                ("svc/main.py", main),
                ("svc/api/items.py", items),
            ]),
            vec![
                row("GET", "/items/{item_id}", "svc/api/items.py"),
                row("GET", "/orders/:id", "routes/orders.ts"),
                row("POST", "/users", "routes/users.js"),
            ]
        );
    }

    #[test]
    fn chains_of_mounts_join_and_cycles_stop() {
        let app = "const app = require('express')();\nconst api = require('./api');\napp.use('/api', api);\n";
        let api = "const router = require('express').Router();\nconst v1 = require('./v1');\n\
router.use('/v1', v1);\nrouter.get('/ping', p);\nmodule.exports = router;\n";
        let v1 = "const r = require('express').Router();\nconst api = require('./api');\n\
r.use('/back', api);\nr.get('/users', u);\nmodule.exports = r;\n";
        let got = served(&[("app.js", app), ("api.js", api), ("v1.js", v1)]);
        assert!(
            got.contains(&row("GET", "/api/v1/users", "v1.js")),
            "{got:?}"
        );
        assert!(got.contains(&row("GET", "/api/ping", "api.js")), "{got:?}");
        // The mount back into `api` closes a cycle: followed once, never around again.
        assert_eq!(got.len(), 2, "{got:?}");
    }

    #[test]
    fn a_router_mounted_nowhere_keeps_its_paths() {
        let users = "const router = require('express').Router();\nrouter.get('/:id', h);\nmodule.exports = router;\n";
        assert_eq!(
            served(&[("routes/users.js", users)]),
            vec![row("GET", "/:id", "routes/users.js")]
        );
    }

    #[test]
    fn joins_prefixes_and_paths() {
        assert_eq!(join_route_path("/api/users", "/:id"), "/api/users/:id");
        assert_eq!(join_route_path("/api/users/", "/"), "/api/users");
        assert_eq!(join_route_path("/items", "{id}"), "/items/{id}");
        assert_eq!(join_route_path("", "/x"), "/x");
        assert_eq!(join_route_path("", ""), "/");
        assert_eq!(join_route_path("/", "/"), "/");
    }
}
