//! Findings of a new-user trial, each pinned by a small workspace written here and driven
//! through the real binary over stdio: path-like targets refused, oversized arguments refused,
//! same-package uses of a qualified JVM type, dependents grouped per declaration, using sites
//! of a Python package, and what a caller-less route/RPC/topic answer says it searched.

mod common;

use common::{Session, workspace};
use serde_json::json;

const SMALL: &[(&str, &str)] = &[
    (
        "services/orders/app.py",
        "import json\n\ndef handle():\n    return json.dumps({})\n",
    ),
    (
        "services/orders/orders.proto",
        "syntax = \"proto3\";\npackage acme.orders;\nservice OrderService {\n  rpc CreateOrder (Req) returns (Res);\n}\nmessage Req {}\nmessage Res {}\n",
    ),
];

#[test]
fn path_like_targets_are_refused_naming_the_problem() {
    let ws = workspace("nu-paths", SMALL);
    let mut s = Session::start(&ws);
    let e = s.err("find_dependents", json!({"target": "../../etc/passwd"}));
    assert!(e.contains("filesystem path"), "{e}");
    assert!(e.contains("outside"), "{e}");
    assert!(e.contains("Pass a name"), "{e}");
    let e = s.err("find_dependents", json!({"target": "/etc/passwd"}));
    assert!(e.contains("filesystem path"), "{e}");
    // An absolute path inside the workspace is its workspace-relative spelling.
    let abs = ws.join("services/orders/app.py");
    let ok = s.ok("find_dependents", json!({"target": abs.to_string_lossy()}));
    assert!(ok.contains("services/orders/app.py"), "{ok}");
    let e = s.err("analyze_grpc", json!({"target": "/etc/passwd"}));
    assert!(e.contains("not an RPC or service name"), "{e}");
    assert!(e.contains("Service.Method"), "{e}");
    // Names still work.
    let ok = s.ok(
        "analyze_grpc",
        json!({"target": "OrderService.CreateOrder"}),
    );
    assert!(ok.contains("orders.proto"), "{ok}");
}

#[test]
fn oversized_text_arguments_are_refused_with_the_limit() {
    let ws = workspace("nu-huge", SMALL);
    let mut s = Session::start(&ws);
    let huge = "a".repeat(100 * 1024);
    for (tool, arg) in [
        ("smart_search", "query"),
        ("search_docs", "query"),
        ("find_dependents", "target"),
        ("analyze_grpc", "target"),
        ("analyze_impact", "target"),
    ] {
        let e = s.err(tool, json!({ arg: huge }));
        assert!(
            e.contains(&format!("`{arg}` is 102400 bytes")),
            "{tool}: {e}"
        );
        assert!(e.contains("4096 bytes"), "{tool}: {e}");
        assert!(
            e.len() < 1000,
            "{tool} echoed the argument: {} bytes",
            e.len()
        );
    }
    let e = s.err("smart_search", json!({"query": "x", "scope": huge}));
    assert!(e.contains("`scope` is 102400 bytes"), "{e}");
    // At the limit is still an ordinary (empty) answer.
    let at = "b".repeat(4096);
    s.ok("smart_search", json!({ "query": at }));
}

#[test]
fn php_qualified_names_are_names_not_paths() {
    let ws = workspace("nu-php", SMALL);
    let mut s = Session::start(&ws);
    s.ok(
        "analyze_grpc",
        json!({"target": "Acme\\Orders\\Service\\OrderService"}),
    );
    s.ok(
        "find_dependents",
        json!({"target": "\\Acme\\Orders\\Client"}),
    );
}

const JAVA: &[(&str, &str)] = &[
    (
        "services/orders/src/main/java/com/acme/orders/Repo.java",
        "package com.acme.orders;\n\npublic interface Repo {\n    void save();\n}\n",
    ),
    (
        "services/orders/src/main/java/com/acme/orders/JdbcRepo.java",
        "package com.acme.orders;\n\npublic class JdbcRepo implements Repo {\n    public void save() {}\n}\n",
    ),
    (
        "services/orders/src/main/java/com/acme/orders/web/Controller.java",
        "package com.acme.orders.web;\n\nimport com.acme.orders.Repo;\n\npublic class Controller {\n    private Repo repo;\n}\n",
    ),
    (
        "services/orders/src/main/java/com/acme/orders/jobs/Sweeper.java",
        "package com.acme.orders.jobs;\n\nimport com.acme.orders.*;\n\npublic class Sweeper {\n    void run(Repo r) { r.save(); }\n}\n",
    ),
    (
        "services/orders/src/main/java/com/acme/other/Repo.java",
        "package com.acme.other;\n\npublic interface Repo {}\n",
    ),
    (
        "services/orders/src/main/java/com/acme/other/Uses.java",
        "package com.acme.other;\n\npublic class Uses implements Repo {}\n",
    ),
    (
        "services/orders/src/main/java/com/acme/orders/chaos/Filter.java",
        "package com.acme.orders.chaos;\n\nimport org.framework.core.annotation.Repo;\n\n@Repo(1)\npublic class Filter {}\n",
    ),
    (
        "services/basket/Basket/Store.cs",
        "namespace Acme.Basket;\n\npublic interface IStore { }\n",
    ),
    (
        "services/basket/Basket/RedisStore.cs",
        "namespace Acme.Basket;\n\npublic class RedisStore : IStore { }\n",
    ),
];

#[test]
fn a_qualified_type_keeps_its_same_package_users() {
    let ws = workspace("nu-fqn", JAVA);
    let mut s = Session::start(&ws);
    let t = s.ok("find_dependents", json!({"target": "com.acme.orders.Repo"}));
    // The importer, the same-package implementer and the wildcard importer…
    assert!(t.contains("web/Controller.java:3"), "{t}");
    assert!(t.contains("orders/JdbcRepo.java:3"), "{t}");
    assert!(t.contains("same package `com.acme.orders`"), "{t}");
    assert!(t.contains("jobs/Sweeper.java:6"), "{t}");
    // …and not the users of the other package's `Repo`.
    assert!(!t.contains("other/Uses.java"), "{t}");
    let t = s.ok("find_dependents", json!({"target": "Acme.Basket.IStore"}));
    assert!(t.contains("Basket/RedisStore.cs:3"), "{t}");
}

#[test]
fn php_classes_of_one_namespace_use_each_other_without_an_import() {
    let ws = workspace(
        "nu-php-ns",
        &[
            (
                "ratings/src/Database.php",
                "<?php\n\nnamespace Acme\\Ratings;\n\nclass Database\n{\n}\n",
            ),
            (
                "ratings/src/Kernel.php",
                "<?php\n\nnamespace Acme\\Ratings;\n\nuse Acme\\Ratings\\Service\\Other;\n\nclass Kernel\n{\n    public function build($c)\n    {\n        // Database is registered below\n        $c->register(Database::class);\n    }\n}\n",
            ),
            (
                "ratings/src/Service/Other.php",
                "<?php\n\nnamespace Acme\\Ratings\\Service;\n\nclass Other\n{\n    private $database;\n    /** Database of another namespace: not this one without an import. */\n    function f() { return new Database(); }\n}\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let t = s.ok("find_dependents", json!({"target": "Database"}));
    assert!(t.contains("src/Kernel.php:12"), "{t}");
    assert!(t.contains("same package"), "{t}");
    assert!(!t.contains("Service/Other.php"), "{t}");
}

#[test]
fn a_missing_proto_path_names_the_proto_files_not_a_scope_argument() {
    let ws = workspace(
        "nu-proto-path",
        &[(
            "orders/api/orders.proto",
            "syntax = \"proto3\";\npackage acme;\nservice Orders { rpc Get (R) returns (R); }\nmessage R {}\n",
        )],
    );
    let mut s = Session::start(&ws);
    let e = s.err("analyze_grpc", json!({"target": "orders/none.proto"}));
    assert!(e.contains("Invalid target for analyze_grpc"), "{e}");
    assert!(e.contains("`orders/api/orders.proto`"), "{e}");
    assert!(!e.contains("scope"), "{e}");
}

#[test]
fn a_bare_name_is_grouped_per_declaration_and_a_library_type_left_out() {
    let ws = workspace("nu-groups", JAVA);
    let mut s = Session::start(&ws);
    let t = s.ok("find_dependents", json!({"target": "Repo"}));
    let orders = t
        .find("interface `Repo` declared at `services/orders/src/main/java/com/acme/orders/Repo.java:3`")
        .unwrap_or_else(|| panic!("no group for com.acme.orders.Repo:\n{t}"));
    let other = t
        .find("interface `Repo` declared at `services/orders/src/main/java/com/acme/other/Repo.java:3`")
        .unwrap_or_else(|| panic!("no group for com.acme.other.Repo:\n{t}"));
    let (first, second) = if orders < other {
        (orders, other)
    } else {
        (other, orders)
    };
    let (a, b) = (&t[first..second], &t[second..]);
    let (orders_part, other_part) = if orders < other { (a, b) } else { (b, a) };
    assert!(orders_part.contains("web/Controller.java:3"), "{t}");
    assert!(orders_part.contains("orders/JdbcRepo.java:3"), "{t}");
    assert!(other_part.contains("other/Uses.java:3"), "{t}");
    assert!(!other_part.contains("Controller.java"), "{t}");
    // The framework annotation of the same name is no dependent, and is named as left out.
    let listed = t.split("---").next().unwrap();
    assert!(!listed.contains("chaos/Filter.java"), "{t}");
    assert!(
        t.contains("Left out: 1 import(s) of a same-named type"),
        "{t}"
    );
    assert!(t.contains("`org.framework.core.annotation.Repo`"), "{t}");
    assert!(t.contains("chaos/Filter.java:3"), "{t}");
    // Asked by its full name, the library type is listed.
    let t = s.ok(
        "find_dependents",
        json!({"target": "org.framework.core.annotation.Repo"}),
    );
    assert!(t.contains("chaos/Filter.java:3"), "{t}");
}

#[test]
fn a_python_package_lists_its_using_sites_not_only_the_import() {
    let mut body = String::from(
        "import pika as rabbit\n\n# rabbit.comment() is no use\n\nclass Publisher:\n    def connect(self):\n        self.c = rabbit.BlockingConnection(rabbit.ConnectionParameters('h'))\n        s = 'rabbit.in_a_string()'\n",
    );
    for k in 0..12 {
        body.push_str(&format!("        rabbit.call_{k}()\n"));
    }
    let ws = workspace(
        "nu-pika",
        &[
            ("services/payment/publisher.py", body.as_str()),
            (
                "services/payment/worker.py",
                "from pika import BlockingConnection\n\ndef run():\n    return BlockingConnection()\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let t = s.ok("find_dependents", json!({"target": "pika"}));
    assert!(t.contains("publisher.py:1` — pika (exact)"), "{t}");
    assert!(
        t.contains(
            "publisher.py:7` — uses rabbit.BlockingConnection in class `Publisher` (heuristic)"
        ),
        "{t}"
    );
    assert!(
        t.contains("worker.py:4` — uses BlockingConnection in function `run`"),
        "{t}"
    );
    // Comments and strings are no uses; the file's uses are capped, the rest counted.
    assert!(!t.contains("publisher.py:3`"), "{t}");
    assert!(!t.contains("publisher.py:8`"), "{t}");
    assert!(t.contains("(+3 more uses in this file)"), "{t}");
    // File granularity folds them back to one row per file.
    let t = s.ok(
        "find_dependents",
        json!({"target": "pika", "granularity": "file"}),
    );
    assert!(t.contains("2 dependent(s) in 2 file(s)"), "{t}");
}

#[test]
fn go_php_and_java_imports_list_their_using_sites_and_a_qualified_member_its_uses() {
    let ws = workspace(
        "nu-uses",
        &[
            (
                "services/dispatch/main.go",
                "package main\n\nimport (\n\t\"fmt\"\n\t\"github.com/streadway/amqp\"\n\tredis \"github.com/go-redis/redis/v8\"\n)\n\nvar ch *amqp.Channel\nvar amqpUri string\n\nfunc main() {\n\t// amqp.Dial in a comment\n\tconn, _ := amqp.Dial(\"amqp://x\")\n\tfmt.Println(conn, \"amqp.Dial\")\n\t_ = redis.NewClient(nil)\n}\n",
            ),
            (
                "services/ratings/src/Api.php",
                "<?php\nnamespace Shop;\n\nuse GuzzleHttp\\Client;\n\nclass Api {\n    public function go() {\n        $c = new Client(['base_uri' => 'http://x']);\n        return Client::VERSION;\n    }\n}\n",
            ),
            (
                "services/web/server.js",
                "const express = require('express');\nconst app = express();\n",
            ),
            (
                "services/shipping/src/Cart.java",
                "package shop;\n\nimport org.apache.http.client.methods.HttpPost;\n\nclass Cart {\n  void add() {\n    HttpPost post = new HttpPost(\"http://cart\");\n  }\n}\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let t = s.ok("find_dependents", json!({"target": "amqp"}));
    assert!(
        t.contains("main.go:5` — github.com/streadway/amqp (exact)"),
        "{t}"
    );
    assert!(t.contains("main.go:9` — uses amqp.Channel"), "{t}");
    assert!(
        t.contains("main.go:14` — uses amqp.Dial in function `main`"),
        "{t}"
    );
    // A longer identifier, a comment and a string are no uses.
    for line in [10, 13, 15] {
        assert!(!t.contains(&format!("main.go:{line}`")), "{line}: {t}");
    }
    // Go's package name skips a `/vN` suffix and follows an alias.
    let t = s.ok(
        "find_dependents",
        json!({"target": "github.com/go-redis/redis/v8"}),
    );
    assert!(t.contains("main.go:16` — uses redis.NewClient"), "{t}");
    // A qualified member that no import names: its uses where the import binds the qualifier.
    let t = s.ok("find_dependents", json!({"target": "amqp.Channel"}));
    assert!(t.contains("main.go:9` — uses amqp.Channel"), "{t}");
    assert!(!t.contains("main.go:14`"), "{t}");
    assert!(!t.contains("0 dependents"), "{t}");
    let t = s.ok("find_dependents", json!({"target": "GuzzleHttp\\Client"}));
    assert!(t.contains("Api.php:8` — uses Client"), "{t}");
    assert!(t.contains("Api.php:9` — uses Client::VERSION"), "{t}");
    let t = s.ok(
        "find_dependents",
        json!({"target": "org.apache.http.client.methods.HttpPost"}),
    );
    assert!(t.contains("Cart.java:7` — uses HttpPost"), "{t}");
    // A sub-package import is not "only containing" the name.
    let t = s.ok("find_dependents", json!({"target": "org.apache.http"}));
    assert!(
        t.contains("Nothing imports `org.apache.http` itself"),
        "{t}"
    );
    assert!(
        t.contains("Cart.java:3` — org.apache.http.client.methods.HttpPost (sub-package)"),
        "{t}"
    );
    // By package, a file with no package statement is named by its directory in the workspace.
    let t = s.ok(
        "find_dependents",
        json!({"target": "express", "granularity": "package"}),
    );
    assert!(
        t.contains("package `services/web` — first at `services/web/server.js:1`"),
        "{t}"
    );
}

#[test]
fn started_in_a_service_of_a_configured_workspace_the_session_says_whose_config_it_left() {
    let ws = workspace(
        "nu-parent-config",
        &[
            (
                ".agents/mesh-mcp.toml",
                "[workspace]\nroots = [\"services/*\"]\n",
            ),
            ("services/orders/app.py", "def handle():\n    return 1\n"),
            ("services/cart/app.py", "def cart():\n    return 2\n"),
        ],
    );
    let mut s = Session::start(&ws.join("services/orders"));
    let t = s.ok("index_status", json!({}));
    assert!(
        t.contains("- Config warning: no config file here, but "),
        "{t}"
    );
    assert!(
        t.contains(".agents/mesh-mcp.toml configures the workspace"),
        "{t}"
    );
    // From the workspace itself, nothing to say.
    let mut s = Session::start(&ws);
    let t = s.ok("index_status", json!({}));
    assert!(!t.contains("Config warning"), "{t}");
}

#[test]
fn a_ui_calling_an_api_route_of_the_same_path_as_its_own_page_is_external_to_it() {
    let ws = workspace(
        "nu-same-path",
        &[
            (
                "services/api/app.py",
                "from flask import Flask\napp = Flask(__name__)\n\n@app.route('/catalog/search')\ndef search():\n    return []\n",
            ),
            (
                "services/ui/app.py",
                "import requests\nfrom flask import Flask\napp = Flask(__name__)\n\n@app.route('/catalog/search')\ndef page():\n    return requests.get('http://api:8080/catalog/search').json()\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let t = s.ok("analyze_impact", json!({"target": "GET /catalog/search"}));
    let caller_rows: Vec<&str> = t
        .lines()
        .filter(|l| l.contains("| caller |") && l.contains("services/ui/app.py:7"))
        .collect();
    assert!(!caller_rows.is_empty(), "{t}");
    // Linked to the api's route, the ui's call is EXTERNAL, though the ui serves the same path.
    assert!(
        caller_rows.iter().any(|l| l.contains("| EXTERNAL |")),
        "{t}"
    );
    // The header says why a row of an owner root is EXTERNAL.
    assert!(
        t.contains("a caller is EXTERNAL when its root is not that of the route it calls"),
        "{t}"
    );
}

#[test]
fn a_zoomed_mesh_shows_no_route_of_a_test_file_and_a_route_registered_twice_once() {
    let ws = workspace(
        "nu-zoom-tests",
        &[
            (
                "services/api/app.py",
                "from flask import Flask\napp = Flask(__name__)\n\n@app.route('/items')\ndef items():\n    return []\n\napp.add_url_rule('/items', view_func=items)\n",
            ),
            (
                "services/api/tests/test_app.py",
                "from flask import Flask\napp = Flask(__name__)\n\n@app.route('/only-in-tests')\ndef fake():\n    return []\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let t = s.ok(
        "visualize_mesh",
        json!({"service": "services/api", "format": "json"}),
    );
    assert!(t.contains("GET /items"), "{t}");
    assert!(!t.contains("/only-in-tests"), "{t}");
    assert_eq!(t.matches("\"name\": \"GET /items\"").count(), 1, "{t}");
    assert_eq!(t.matches("\"kind\": \"owns\"").count(), 1, "{t}");
}

#[test]
fn a_route_with_no_caller_says_what_was_searched() {
    let ws = workspace(
        "nu-route",
        &[
            (
                "services/orders/app.py",
                "from flask import Flask\napp = Flask(__name__)\n\n@app.route('/orders', methods=['GET'])\ndef list_orders():\n    return []\n\n@app.route('/health')\ndef health():\n    return 'ok'\n",
            ),
            (
                "services/web/client.py",
                "import requests\n\ndef fetch():\n    return requests.get('http://orders/orders')\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let t = s.ok("analyze_impact", json!({"target": "GET /health"}));
    assert!(t.contains("**No caller found**: searched "), "{t}");
    assert!(t.contains("HTTP call site(s) in "), "{t}");
}
