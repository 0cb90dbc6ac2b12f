//! The HTTP calls the extractors find in client code, one table for the languages whose
//! tests were the same function over and over: each case is a file, its extractor and the
//! calls it must yield, so a new idiom is a row and every row is checked the same way.

use super::test_support::{Extract, http_calls_borrowed};
use super::{go, php, python, ruby, rust};
use crate::index::facts::{FileFacts, HttpFact, Value};

/// One client file and the calls its extractor must find.
struct Case {
    /// Language and idiom, named in a failure.
    name: &'static str,
    extract: Extract,
    path: &'static str,
    src: &'static str,
    /// Each call as (method when known, URL as the evaluator read it, line).
    want: &'static [(Option<&'static str>, &'static str, u32)],
}

const GET: Option<&str> = Some("GET");
const POST: Option<&str> = Some("POST");
const PUT: Option<&str> = Some("PUT");
const PATCH: Option<&str> = Some("PATCH");
const DELETE: Option<&str> = Some("DELETE");

const CASES: &[Case] = &[
    Case {
        name: "python: requests, httpx, sessions and async clients",
        extract: python::extract,
        path: "svc/client.py",
        src: r#"import requests, httpx

BASE_URL = "http://orders:8080"

def calls(oid):
    requests.get("http://orders:8080/orders/42")
    requests.post(f"{BASE_URL}/orders/{oid}/pay", json={})
    httpx.delete(BASE_URL + "/orders/" + str(oid))
    requests.request("PUT", url="/orders/" + oid)
    session = requests.Session()
    session.get("/carts/%s" % oid)
    url = f"{BASE_URL}/payments/{oid}"
    requests.get(url)
    d = {}
    d.get("/not/http")
    requests.get("orders")

async def acalls():
    async with httpx.AsyncClient(base_url="http://x") as c:
        await c.patch("/orders/1")
    await httpx.AsyncClient().get("/async/{}".format(1))
"#,
        want: &[
            (GET, "http://orders:8080/orders/42", 6),
            // Module-level names stay references for the graph; parameters are run-time.
            (POST, "{BASE_URL}/orders/{}/pay", 7),
            (DELETE, "{BASE_URL}/orders/{}", 8),
            (PUT, "/orders/{}", 9),
            (GET, "/carts/{}", 11),
            (GET, "{BASE_URL}/payments/{}", 13),
            // `requests` is HTTP whatever the URL; the graph lists it as unresolved.
            (GET, "orders", 16),
            (PATCH, "/orders/1", 20),
            (GET, "/async/1", 21),
        ],
    },
    Case {
        name: "ruby: Net::HTTP, Faraday and HTTParty",
        extract: ruby::extract,
        path: "checker.rb",
        src: r##"require "net/http"
require "faraday"

class StockChecker
  BASE = "http://inventory:8000"

  def in_stock?(sku)
    Net::HTTP.get_response(URI("#{@base_url}/stock/#{sku}"))
    uri = URI.parse("http://orders/orders/#{sku}")
    Net::HTTP.get(uri)
    Faraday.get("http://pricing/prices/1")
    conn = Faraday.new(url: BASE)
    conn.post("/quotes", { a: 1 })
    HTTParty.delete(BASE + "/carts/" + sku)
    req = Net::HTTP::Put.new("/orders/#{sku}/status")
    hash.get("/not/http")
    @client.get "/clients/#{sku}"
  end
end
"##,
        want: &[
            // URLs are values as written: hosts and class constants are kept, `@ivars` and
            // method calls are run-time parts, names the file cannot bind are left to the graph.
            (GET, "{}/stock/{sku}", 8),
            (GET, "http://orders/orders/{sku}", 10),
            (GET, "http://pricing/prices/1", 11),
            (POST, "/quotes", 13),
            (DELETE, "http://inventory:8000/carts/{sku}", 14),
            (PUT, "/orders/{sku}/status", 15),
            (GET, "/clients/{sku}", 17),
        ],
    },
    Case {
        name: "ruby: HTTParty classes with a base_uri",
        extract: ruby::extract,
        path: "orders_client.rb",
        src: "class Orders\n  include HTTParty\n  base_uri \"http://orders\"\n\n  def find(id)\n    self.class.get(\"/orders/#{id}\")\n  end\n\n  def self.all\n    get(\"/orders\")\n  end\nend\n",
        want: &[(GET, "/orders/{}", 6), (GET, "/orders", 10)],
    },
    Case {
        name: "php: Guzzle clients and the Http facade",
        extract: php::extract,
        path: "src/PricingGateway.php",
        src: r#"<?php
use GuzzleHttp\Client;
use Illuminate\Support\Facades\Http;

class PricingGateway
{
    public function __construct()
    {
        $this->http = new Client(['base_uri' => 'http://pricing:8080']);
    }

    public function fetch(string $sku)
    {
        $this->http->get('/prices/' . $sku);
        $this->http->request('POST', "/quotes/{$sku}/accept");
        Http::withToken($t)->put("http://orders/orders/$sku");
        Http::get(sprintf('/stock/%s', $sku));
        $guzzle = new \GuzzleHttp\Client();
        $guzzle->deleteAsync($this->base . '/carts/' . $sku);
        $cache->get('/not/http');
    }
}
"#,
        want: &[
            // URLs are values as written: hosts are kept, parameters are run-time parts, a
            // property stays a name the graph may resolve.
            // Relative to the client's base_uri, whose host names the service.
            (GET, "http://pricing:8080/prices/{}", 14),
            (POST, "http://pricing:8080/quotes/{}/accept", 15),
            (PUT, "http://orders/orders/{}", 16),
            (GET, "/stock/{}", 17),
            (DELETE, "{$this.base}/carts/{}", 19),
        ],
    },
    Case {
        name: "go: net/http, NewRequest and resty",
        extract: go::extract,
        path: "client.go",
        src: r#"package client

func calls(base, id string, client *http.Client) {
	http.Get("http://orders:8080/orders/" + id)
	http.Post(base+"/orders", "application/json", body)
	req, _ := http.NewRequest("DELETE", base+"/orders/"+id, nil)
	req2, _ := http.NewRequestWithContext(ctx, http.MethodPut, fmt.Sprintf("%s/orders/%s/items", base, id), nil)
	url := fmt.Sprintf("%v/payments/%d", base, 7)
	client.Get(url)
	resty.New().R().Post("/refunds")
	client.Get(base)
	cache.Get("orders")
	cache.Get("/orders/index", &v)
	http.Get("/etc/passwd")
}
"#,
        want: &[
            // URLs are values as written: hosts are kept, parameters are run-time parts.
            (GET, "http://orders:8080/orders/{}", 4),
            (POST, "{}/orders", 5),
            (DELETE, "{}/orders/{}", 6),
            (PUT, "{}/orders/{}/items", 7),
            // A literal argument of Sprintf is part of the URL.
            (GET, "{}/payments/7", 9),
            (POST, "/refunds", 10),
            // `http.Get` is a request whatever its URL; the graph finds no route for it.
            (GET, "/etc/passwd", 14),
        ],
    },
    Case {
        name: "go: requests sent by Do, Sprintf URLs and package variables",
        extract: go::extract,
        path: "client.go",
        src: r#"package client

import "github.com/go-resty/resty/v2"

var priceAddr = os.Getenv("PRICE_ADDR")

func calls(ctx context.Context, addr string, id int, c *http.Client) {
	resp, err := http.Get(fmt.Sprintf("http://%s/price/%d", addr, id))
	req, _ := http.NewRequest("POST", "http://cart:8080/cart/"+strconv.Itoa(id), body)
	resp, err = c.Do(req)
	u := fmt.Sprintf("http://%s/price/%d", priceAddr, id)
	http.Get(u)
	req2, _ := http.NewRequestWithContext(ctx, http.MethodDelete, u, nil)
	c.Do(req2)
	client := resty.New()
	client.R().SetBody(b).Post("http://orders/orders")
	client.R().Get(u)
	c.Get(cacheKey)
	store.Get("key")
	req3, _ := http.NewRequest(method, target, nil)
}
"#,
        want: &[
            (GET, "http://{}/price/{}", 8),
            // The request is built here and sent by `c.Do(req)`: one call, at NewRequest.
            (POST, "http://cart:8080/cart/{}", 9),
            // A package variable stays a reference for the graph (an env lookup).
            (GET, "http://{priceAddr}/price/{}", 12),
            (DELETE, "http://{priceAddr}/price/{}", 13),
            (POST, "http://orders/orders", 16),
            (GET, "http://{priceAddr}/price/{}", 17),
            // `http.NewRequest` is a request whatever its arguments.
            (None, "{target}", 20),
        ],
    },
    Case {
        name: "rust: reqwest",
        extract: rust::extract,
        path: "src/client.rs",
        src: r#"use reqwest::Client;

async fn call(client: &Client, base: &str, id: u64) {
    client.get(format!("{}/orders/{}", base, id)).send().await;
    let url = format!("{base}/payments");
    client.post(&url).json(&x).send().await;
    reqwest::get("http://inventory:8080/stock/items").await;
    client.request(Method::PUT, format!("{}/carts/{id}", base)).send().await;
    client.get(base).send().await;
    map.get("orders");
}
"#,
        want: &[
            // URLs are values as written: parameters are run-time parts, hosts are kept.
            (GET, "{}/orders/{}", 4),
            // A parameter captured by `format!("{base}…")` is a run-time part too.
            (POST, "{}/payments", 6),
            (GET, "http://inventory:8080/stock/items", 7),
            (PUT, "{}/carts/{}", 8),
        ],
    },
    Case {
        name: "rust: a map's get is not a request",
        extract: rust::extract,
        path: "src/x.rs",
        src: "fn f(m: HashMap) { m.get(\"/orders\"); }",
        want: &[],
    },
];

/// The case named `name`, extracted.
fn facts_of(name: &str) -> FileFacts {
    let c = CASES
        .iter()
        .find(|c| c.name == name)
        .expect("a case of that name");
    (c.extract)(c.path, c.src)
}

/// Every case yields exactly its calls, and client code serves no routes or mounts.
#[test]
fn each_case_yields_its_calls_and_nothing_else() {
    for c in CASES {
        let f = (c.extract)(c.path, c.src);
        let want: Vec<(Option<&str>, String, u32)> = c
            .want
            .iter()
            .map(|&(m, u, l)| (m, u.to_string(), l))
            .collect();
        assert_eq!(http_calls_borrowed(&f), want, "case {}", c.name);
        assert!(
            f.http.iter().all(|h| matches!(h, HttpFact::Call { .. })),
            "case {}: {:?}",
            c.name,
            f.http
        );
    }
}

/// A Go package variable read from the environment binds as that lookup, which is why the
/// calls built from it keep `{priceAddr}` for the graph.
#[test]
fn a_go_package_variable_binds_to_its_env_lookup() {
    let f = facts_of("go: requests sent by Do, Sprintf URLs and package variables");
    assert!(
        f.bindings
            .iter()
            .any(|b| b.name == "priceAddr" && b.value == Value::env("PRICE_ADDR", None))
    );
}
