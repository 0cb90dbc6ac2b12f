//! HTTP client calls (pass 3): `fetch`, axios, got, ky, `request` and bound clients (Angular
//! `HttpClient`, NestJS `HttpService`), with the method and URL they name.

use super::Ex;
use crate::index::facts::HttpFact;

impl<'t> Ex<'t, '_, '_> {
    pub(super) fn http_method_of(verb: &str) -> String {
        match verb {
            "del" => "DELETE".to_string(),
            "all" => "ANY".to_string(),
            v => v.to_ascii_uppercase(),
        }
    }

    /// `fetch(url, { method })`: GET unless the options say otherwise.
    pub(super) fn fetch_call(&mut self, p: usize) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        let Some(url) = self.url_in(a, e, true) else {
            return;
        };
        let method = match args.get(1) {
            Some(&(oa, _)) if t.is(oa, "{") => match self.object_value(oa, "method") {
                Some(v) => t.str_value(v).map(|m| m.to_ascii_uppercase()),
                None => Some("GET".to_string()),
            },
            Some(_) => None,
            None => Some("GET".to_string()),
        };
        let line = self.line(p);
        self.facts.http.push(HttpFact::Call { method, url, line });
    }

    /// An HTTP client call: `verb` from the method name; `config` when the first argument may
    /// be a `{ url, method }` object (axios, got, ky, `request`).
    pub(super) fn http_call(&mut self, p: usize, verb: Option<&str>, config: bool, sure: bool) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        // The options object inline, or held in a variable (`request(localVarRequestOptions,
        // cb)` with `const localVarRequestOptions = { method: 'POST', uri: … }`).
        let a = match t.ident(a) {
            Some(name) if config && e == a + 1 => self
                .asg
                .last(name, a)
                .map(|x| x.rhs.0)
                .filter(|&o| t.is(o, "{"))
                .unwrap_or(a),
            _ => a,
        };
        let (path, method) = if config && t.is(a, "{") {
            let Some(u) = self
                .object_value(a, "url")
                .or_else(|| self.object_value(a, "uri"))
            else {
                return;
            };
            let end = t.close(a).unwrap_or(t.len());
            let path = self.url_in(u, self.expr_end(u, end, true), sure);
            let method = match self.object_value(a, "method") {
                Some(m) => t.str_value(m).map(|m| m.to_ascii_uppercase()),
                None => Some("GET".to_string()),
            };
            (path, method)
        } else {
            let method = match verb {
                Some(v) => Some(Self::http_method_of(v)),
                None => match args.get(1) {
                    Some(&(oa, _)) if t.is(oa, "{") => match self.object_value(oa, "method") {
                        Some(m) => t.str_value(m).map(|m| m.to_ascii_uppercase()),
                        None => Some("GET".to_string()),
                    },
                    Some(_) => None,
                    None => Some("GET".to_string()),
                },
            };
            (self.url_in(a, e, sure), method)
        };
        if let Some(url) = path {
            let line = self.line(p);
            self.facts.http.push(HttpFact::Call { method, url, line });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;

    #[test]
    fn http_client_calls() {
        let src = r#"fetch('/api/orders').then(r => r.json());
fetch(`${BASE}/orders/${id}`, { method: 'post', body });
fetch(BASE + '/users/' + id, opts);
fetch(url);
axios.get('/api/items');
axios.post('http://billing:8080/invoices?x=1', payload);
axios({ url: '/users/1', method: 'delete' });
axios('/plain');
const api = axios.create({ baseURL: 'http://x' });
api.put('/carts/1', body);
got.post('http://svc:8080/notify');
ky.get(`${BASE}/stock/${sku}`);
ky.get(`${BASE}${PATH}`);
this.http.get<Order[]>(`${this.base}/api/orders/${dto.id}`);
http.get('http://legacy/status', res => {});
window.fetch('/w');
fetch('/etc/passwd');
"#;
        let f = extract("src/client.ts", src);
        let m = |s: &str| Some(s.to_string());
        assert_eq!(
            calls(&f),
            vec![
                (m("GET"), "/api/orders".into(), 1),
                (m("POST"), "{BASE}/orders/{id}".into(), 2),
                (None, "{BASE}/users/{id}".into(), 3),
                // fetch is HTTP whatever its URL: an unknown one is kept, and the graph lists
                // the site as unresolved.
                (m("GET"), "{url}".into(), 4),
                (m("GET"), "/api/items".into(), 5),
                (m("POST"), "http://billing:8080/invoices?x=1".into(), 6),
                (m("DELETE"), "/users/1".into(), 7),
                (m("GET"), "/plain".into(), 8),
                (m("PUT"), "/carts/1".into(), 10),
                (m("POST"), "http://svc:8080/notify".into(), 11),
                (m("GET"), "{BASE}/stock/{sku}".into(), 12),
                (m("GET"), "{BASE}{PATH}".into(), 13),
                (m("GET"), "{this.base}/api/orders/{dto.id}".into(), 14),
                (m("GET"), "http://legacy/status".into(), 15),
                (m("GET"), "/w".into(), 16),
                (m("GET"), "/etc/passwd".into(), 17),
            ]
        );
        assert!(routes(&f).is_empty());
    }
}
