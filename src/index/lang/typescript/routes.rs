//! HTTP routes served in code: Express/Koa/Fastify-style `app.get('/x', h)`, `app.route('/x')`
//! chains and `fastify.route({ … })` (pass 3), and Next.js file-system routes read from the path
//! once the passes are done.

use super::{Bind, Ex, HTTP_CLIENT_NAMES, VERBS};
use crate::index::facts::{FileFacts, HttpFact};
use crate::index::lang::common::join_route;
use crate::index::lang::tokens::{Chain, Tokens};

/// Next.js file-system routes: `pages/api/orders/[id].ts` serves `/api/orders/[id]` (its
/// methods from `req.method === 'POST'` and `case 'POST':` branches, else ANY), and
/// `app/orders/[id]/route.ts` serves `/orders/[id]` for each exported `GET`, `POST`, ….
pub(super) fn next_routes(path: &str, t: &Tokens, facts: &mut FileFacts) {
    const METHODS: [&str; 7] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let segs: Vec<&str> = stem.split('/').collect();
    let join = |parts: &[&str]| {
        let kept: Vec<&str> = parts
            .iter()
            .copied()
            .filter(|p| !(p.starts_with('@') || p.starts_with('(') && p.ends_with(')')))
            .collect();
        format!("/{}", kept.join("/"))
    };
    if segs.last() == Some(&"route")
        && let Some(i) = segs.iter().rposition(|s| *s == "app")
    {
        let route = join(&segs[i + 1..segs.len() - 1]);
        for s in &facts.symbols {
            if s.container.is_none() && METHODS.contains(&s.name.as_str()) {
                facts.http.push(HttpFact::Route {
                    method: s.name.clone(),
                    path: route.clone(),
                    handler: Some(s.name.clone()),
                    line: s.line,
                });
            }
        }
    } else if let Some(i) = segs.windows(2).position(|w| w == ["pages", "api"]) {
        let mut rest = &segs[i + 1..];
        if rest.len() > 1 && rest.last() == Some(&"index") {
            rest = &rest[..rest.len() - 1];
        }
        let route = join(rest);
        let mut methods: Vec<String> = Vec::new();
        let mut line = None;
        for k in 0..t.len() {
            if t.kw(k, "export") && t.kw(k + 1, "default") && line.is_none() {
                line = Some(t.line(k));
            }
            let mut j = k + 1;
            if t.ident(k) == Some("method") {
                while t.is(j, "=") || t.is(j, "==") || t.is(j, "===") {
                    j += 1;
                }
            } else if !t.kw(k, "case") {
                continue;
            }
            if (j > k + 1 || t.kw(k, "case"))
                && let Some(v) = t.str_value(j).filter(|v| METHODS.contains(&v.as_ref()))
                && !methods.iter().any(|m| *m == v)
            {
                methods.push(v.into_owned());
            }
        }
        if methods.is_empty() {
            methods.push("ANY".into());
        }
        for method in methods {
            facts.http.push(HttpFact::Route {
                method,
                path: route.clone(),
                handler: None,
                line: line.unwrap_or(1),
            });
        }
    }
}

impl<'t> Ex<'t, '_, '_> {
    /// True when the argument range is a function literal (`async (req) => …`, `function`,
    /// `req => …`).
    fn is_function_arg(&self, a: usize, e: usize) -> bool {
        self.function_value(a, e).is_some()
    }

    /// The dotted name filling exactly `a..e` (`handler`, `ctrl.create`), if it is one.
    fn name_ref(&self, a: usize, e: usize) -> Option<String> {
        let t = self.t;
        let mut out = String::new();
        let mut k = a;
        while k < e {
            if let Some(id) = t.ident(k) {
                out.push_str(id);
            } else if t.is(k, ".") && !out.is_empty() {
                out.push('.');
            } else {
                return None;
            }
            k += 1;
        }
        (!out.is_empty() && !out.ends_with('.')).then_some(out)
    }

    fn routerish(name: &str, bound: Option<&Bind>) -> bool {
        if matches!(bound, Some(Bind::Router(_))) {
            return true;
        }
        let l = name.to_ascii_lowercase();
        l.contains("app")
            || l.contains("router")
            || l.contains("server")
            || l.contains("route")
            || l == "r"
            || l == "fastify"
            || l == "instance"
    }

    /// `app.get('/x', h)`, `router.post('/x', auth, async (req, res) => …)`: a route when a
    /// handler follows the path and the receiver is not an HTTP client. Returns whether it
    /// recorded one.
    pub(super) fn maybe_route(
        &mut self,
        recv: &str,
        verb: &str,
        p: usize,
        bound: Option<&Bind>,
    ) -> bool {
        let t = self.t;
        if HTTP_CLIENT_NAMES.contains(&recv) || matches!(bound, Some(Bind::Http)) {
            return false;
        }
        let args = t.args(p);
        if args.len() < 2 {
            return false;
        }
        let (a, e) = args[0];
        let Some(path) = t.str_value(a).filter(|_| e == a + 1) else {
            return false;
        };
        if !path.starts_with('/') || t.text(a).starts_with('`') {
            return false;
        }
        let (la, le) = args[args.len() - 1];
        let handler = self.name_ref(la, le);
        let ok =
            self.is_function_arg(la, le) || (handler.is_some() && Self::routerish(recv, bound));
        if !ok {
            return false;
        }
        let path = match bound {
            Some(Bind::Router(prefix)) if !prefix.is_empty() => join_route(prefix, &path),
            _ => path.into_owned(),
        };
        let line = self.line(p);
        self.facts.http.push(HttpFact::Route {
            method: Self::http_method_of(verb),
            path,
            handler,
            line,
        });
        true
    }

    /// `app.route('/x').get(h).post(h2)` and Fastify `fastify.route({ method, url, handler })`.
    pub(super) fn route_chain(&mut self, c: &Chain<'t>, p: usize, bound: Option<&Bind>) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        let prefix = match bound {
            Some(Bind::Router(prefix)) => prefix.as_str(),
            _ => "",
        };
        if let Some(path) = t.str_value(a).filter(|v| e == a + 1 && v.starts_with('/')) {
            let path = if prefix.is_empty() {
                path.into_owned()
            } else {
                join_route(prefix, &path)
            };
            let mut j = t.skip_group(p);
            while t.is(j, ".")
                && let Some(verb) = t.ident(j + 1)
                && VERBS.contains(&verb)
                && t.is(j + 2, "(")
            {
                let o = j + 2;
                let handler = t.args(o).last().and_then(|&(ha, he)| self.name_ref(ha, he));
                let line = self.line(o);
                self.facts.http.push(HttpFact::Route {
                    method: Self::http_method_of(verb),
                    path: path.clone(),
                    handler,
                    line,
                });
                j = t.skip_group(o);
            }
            return;
        }
        if t.is(a, "{") && Self::routerish(c.receiver().unwrap_or(""), bound) {
            let Some(url) = self
                .object_value(a, "url")
                .or_else(|| self.object_value(a, "path"))
                .and_then(|u| t.str_value(u))
            else {
                return;
            };
            let url = if prefix.is_empty() {
                url.into_owned()
            } else {
                join_route(prefix, &url)
            };
            let handler = self.object_value(a, "handler").and_then(|h| {
                let end = t.close(a).unwrap_or(t.len());
                let he = self.expr_end(h, end, true);
                self.name_ref(h, he)
            });
            let methods: Vec<String> = match self.object_value(a, "method") {
                Some(m) if t.is(m, "[") => t
                    .args(m)
                    .iter()
                    .filter_map(|&(x, _)| t.str_value(x).map(|v| v.to_ascii_uppercase()))
                    .collect(),
                Some(m) => t
                    .str_value(m)
                    .map(|v| vec![v.to_ascii_uppercase()])
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            let line = self.line(p);
            for method in methods {
                self.facts.http.push(HttpFact::Route {
                    method,
                    path: url.clone(),
                    handler: handler.clone(),
                    line,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;

    #[test]
    fn next_js_file_system_routes() {
        let pages = "export default async function handler(req, res) {\n  if (req.method === 'POST') {\n    return create(req, res);\n  }\n  switch (req.method) {\n    case 'GET':\n      return list(req, res);\n  }\n}\n";
        let f = extract("web/pages/api/orders/[id].ts", pages);
        assert_eq!(
            routes(&f),
            vec![
                ("POST".into(), "/api/orders/[id]".into(), None, 1),
                ("GET".into(), "/api/orders/[id]".into(), None, 1),
            ]
        );
        let f = extract(
            "web/pages/api/health/index.js",
            "export default (req, res) => res.end('ok');\n",
        );
        assert_eq!(
            routes(&f),
            vec![("ANY".into(), "/api/health".into(), None, 1)]
        );
        let app = "import { NextResponse } from 'next/server';\nexport async function GET(request: Request) {\n  return NextResponse.json([]);\n}\nexport async function POST(request: Request) {\n  return NextResponse.json({});\n}\nfunction helper() {}\n";
        let f = extract("web/src/app/(shop)/orders/[id]/route.ts", app);
        assert_eq!(
            routes(&f),
            vec![
                ("GET".into(), "/orders/[id]".into(), Some("GET".into()), 2),
                ("POST".into(), "/orders/[id]".into(), Some("POST".into()), 5),
            ]
        );
        // Not a route file: a page, and an `api` folder outside `pages`.
        assert!(routes(&extract("web/src/app/orders/page.tsx", app)).is_empty());
        assert!(routes(&extract("web/src/api/orders.ts", pages)).is_empty());
    }

    #[test]
    fn express_koa_fastify_routes() {
        let src = r#"const app = express();
const router = express.Router();
const v1 = new Router({ prefix: '/v1' });
app.get('/health', (req, res) => res.send('ok'));
app.post('/orders', auth, validate(schema), createOrder);
app.delete('/orders/:id', async function (req, res) {});
router.put('/items/:id', ctrl.update);
v1.get('/stock/:sku', getStock);
app.use('/api', router);
app.route('/books').get(listBooks).post(addBook);
fastify.route({ method: ['GET', 'HEAD'], url: '/ping', handler: ping });
cache.get('/key');
axios.get('/not/a/route', config);
app.get(`/tpl`, h);
"#;
        let f = extract("src/app.js", src);
        assert_eq!(
            routes(&f),
            vec![
                ("GET".into(), "/health".into(), None, 4),
                (
                    "POST".into(),
                    "/orders".into(),
                    Some("createOrder".into()),
                    5
                ),
                ("DELETE".into(), "/orders/:id".into(), None, 6),
                (
                    "PUT".into(),
                    "/api/items/:id".into(),
                    Some("ctrl.update".into()),
                    7
                ),
                (
                    "GET".into(),
                    "/v1/stock/:sku".into(),
                    Some("getStock".into()),
                    8
                ),
                ("GET".into(), "/books".into(), Some("listBooks".into()), 10),
                ("POST".into(), "/books".into(), Some("addBook".into()), 10),
                ("GET".into(), "/ping".into(), Some("ping".into()), 11),
                ("HEAD".into(), "/ping".into(), Some("ping".into()), 11),
            ]
        );
    }
}
