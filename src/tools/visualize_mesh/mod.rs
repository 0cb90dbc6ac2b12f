//! `visualize_mesh`: the whole workspace as services and the links between them — gRPC calls,
//! HTTP calls, event topics (as nodes, so a fan-out reads at a glance) and imports — as
//! Mermaid, JSON or a standalone HTML page.
//!
//! The view is aggregated, never the raw graph: one node per service (a root, or a top-level
//! directory when the workspace has a single root), one link per (from, to, kind) with the
//! number of sites and the weakest confidence among them. The busiest `max_services` services
//! are drawn and the rest fold into "other services"; `service` zooms into one service and
//! shows its own contracts (gRPC services it implements, routes it serves, topics it touches)
//! and the services they talk to. Every render shrinks itself until it fits the output cap.
//! [`mesh_view`] and the renderers are shared with `mesh-mcp graph`.

mod links;
mod overview;
mod render;
mod services;
mod view;
mod zoom;

pub use render::{render_html, render_json, render_mermaid};
pub(crate) use services::library_users;
pub use services::{resolve_service, service_names};
pub use view::MeshView;

use serde::Deserialize;
use serde_json::{Value, json};

use self::links::folded_links;
use self::overview::overview;
use self::render::mermaid_answer;
use self::services::{find_service, rank_services, service_sizes};
use self::view::NodeKind;
use self::zoom::zoom_view;
use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::index::snapshot::Snapshot;

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "visualize_mesh",
    title: "Draw the service mesh",
    description: "Draws the workspace's services and how they talk — gRPC calls, HTTP calls, \
event topics with their producers and consumers, imports between services — as Mermaid \
(default), JSON or a standalone HTML page. Each link carries its number of call sites and its \
weakest confidence. Zoom into one service with `service` to see its own contracts. For one \
symbol or RPC use smart_search or analyze_grpc. \
Example: {\"format\": \"mermaid\", \"service\": \"services/orders\"}.",
    input_schema: || {
        object_schema(
            json!({
                "format": {"type": "string", "enum": ["mermaid", "json", "html"], "description": "Output format (default \"mermaid\"), e.g. \"json\"."},
                "service": {"type": "string", "description": "Zoom into one service by name, e.g. \"services/orders\" (names are listed by a call without it)."},
                "max_services": super::int_schema("Services drawn before the rest fold into \"other\", e.g. 20.", 40, 1, 200)
            }),
            &[],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: false,
        extra: r#"{"nodes":{"type":"array"},"servicesTotal":{"type":"integer"}}"#,
        row: "{}",
    }),
    run,
    truncation_hint: |_| "Zoom into one service with `service`, or lower `max_services`.".into(),
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    format: Option<String>,
    service: Option<String>,
    max_services: Option<i64>,
}

/// Builds the aggregated view, or an error naming the known services when `zoom` is unknown.
pub fn mesh_view(
    snap: &Snapshot,
    zoom: Option<&str>,
    max_services: usize,
) -> Result<MeshView, String> {
    let (links, ambiguous) = folded_links(snap);
    let services = service_sizes(snap);
    let zoom_name = match zoom {
        None => None,
        Some(z) => Some(find_service(&services, z)?),
    };
    let ranked = rank_services(&services, &links);
    let mut view = MeshView {
        workspace: snap
            .base
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "workspace".into()),
        grouping: if snap.roots.len() > 1 {
            "root"
        } else {
            "directory"
        },
        zoom: zoom_name.clone(),
        nodes: Vec::new(),
        links: Vec::new(),
        services_shown: 0,
        services_total: services.len(),
        hidden: Vec::new(),
        ambiguous_skipped: ambiguous,
        contracts_folded: 0,
        hidden_contracts: Vec::new(),
    };
    let service_caption = |name: &str| -> String {
        let (files, langs) = &services[name];
        let mut l: Vec<(&&str, &usize)> = langs.iter().collect();
        crate::order::sort_by(&mut l, |a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let langs: Vec<&str> = l.iter().take(3).map(|(n, _)| **n).collect();
        if langs.is_empty() {
            crate::render::plural(*files, "file")
        } else {
            format!(
                "{} · {}",
                crate::render::plural(*files, "file"),
                langs.join(", ")
            )
        }
    };
    match &zoom_name {
        None => overview(
            &mut view,
            &ranked,
            &services,
            &links,
            max_services,
            &service_caption,
        ),
        Some(focus) => zoom_view(
            snap,
            &mut view,
            focus,
            &links,
            max_services,
            &service_caption,
        ),
    }
    Ok(view)
}

/// The output budget of a render (the cap is 48 KiB; the footer needs room).
const RENDER_BUDGET: usize = 44 * 1024;

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    let (args, snap): (Args, _) = match super::decode_indexed("visualize_mesh", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let format = args
        .format
        .as_deref()
        .unwrap_or("mermaid")
        .to_ascii_lowercase();
    if !matches!(format.as_str(), "mermaid" | "json" | "html") {
        return ToolOutput::error(format!(
            "Unknown format '{}': use 'mermaid', 'json' or 'html'.",
            crate::protocol::echo_name(args.format.as_deref().unwrap_or(""))
        ));
    }
    let mut max = match super::in_range(
        "visualize_mesh",
        "max_services",
        args.max_services,
        40,
        1,
        200,
    ) {
        Ok(m) => m,
        Err(e) => return e,
    };
    loop {
        let view = match mesh_view(snap, args.service.as_deref(), max) {
            Ok(v) => v,
            Err(e) => return ToolOutput::error(e),
        };
        let text = match format.as_str() {
            "json" => render_json(&view),
            "html" => render_html(&view),
            _ => mermaid_answer(&view),
        };
        // The text and, when it rides along, the data share the cap (a zoomed service's
        // nodes are as many as its contracts): both shrink together.
        let data = view_data(&view);
        let data_len = if env.structured {
            super::structured::json_len(&data)
        } else {
            0
        };
        if text.len() + data_len <= RENDER_BUDGET || max == 1 {
            return ToolOutput::ok(text).with_data(data);
        }
        max /= 2;
    }
}

/// The view as structured data: one row per link (its example site, kind, `from → to`,
/// confidence and the number of sites it folds), and the nodes.
fn view_data(view: &MeshView) -> Value {
    let rows = view
        .links
        .iter()
        .map(|l| {
            let (path, line) = match l.example.rsplit_once(':') {
                Some((p, n)) if n.parse::<u32>().is_ok() => (p, n.parse().unwrap_or(0)),
                _ => (l.example.as_str(), 0),
            };
            super::structured::row(
                path,
                line,
                l.kind.label(),
                &format!("{} → {}", l.from, l.to),
                l.confidence,
                &if l.confidence_counts.is_uniform() {
                    format!("{} site(s)", l.count)
                } else {
                    format!("{} site(s): {}", l.count, l.confidence_counts.describe())
                },
            )
        })
        .collect();
    // The nodes as rows too (`role` = kind, `evidence` = caption, plus `id`): the row
    // helper instead of serialising `MeshNode` into a value, which would add a serializer.
    let nodes: Vec<Value> = view
        .nodes
        .iter()
        .map(|n| {
            let at = n.location.as_deref().unwrap_or("");
            let (path, line) = match at.rsplit_once(':') {
                Some((p, l)) if l.parse::<u32>().is_ok() => (p, l.parse().unwrap_or(0)),
                _ => (at, 0),
            };
            let kind = match n.kind {
                NodeKind::Service => "service",
                NodeKind::Topic => "topic",
                NodeKind::Contract => "contract",
                NodeKind::Other => "other",
            };
            let mut node = super::structured::row(path, line, kind, &n.name, "", &n.caption);
            node["id"] = Value::from(n.id.as_str());
            node
        })
        .collect();
    let mut data = super::structured::page(view.links.len(), 0, None, rows);
    data["nodes"] = Value::Array(nodes);
    data["servicesTotal"] = Value::from(view.services_total);
    data
}

#[cfg(test)]
mod tests {
    use super::view::{LinkKind, MeshNode};
    use super::*;
    use crate::index::facts::Value as FactValue;
    use crate::index::facts::*;

    fn proto() -> FileFacts {
        crate::index::lang::protobuf::extract(
            "orders.proto",
            "syntax = \"proto3\";\npackage shop.v1;\nservice OrderService {\n  rpc CreateOrder(Req) returns (Res);\n}\n",
        )
    }

    /// gateway calls orders over gRPC and HTTP; orders produces a topic `billing` consumes.
    fn shop() -> Snapshot {
        let server = FileFacts {
            symbols: vec![Symbol {
                name: "CreateOrder".into(),
                kind: SymbolKind::Method,
                line: 5,
                end_line: 9,
                doc_line: None,
                container: Some("server".into()),
            }],
            grpc: vec![GrpcFact::server("OrderService", Some("server"), 3)],
            events: vec![EventFact::at(
                EventRole::Producer,
                FactValue::lit("orders.created"),
                "kafka-go",
                7,
            )],
            http: vec![HttpFact::route("GET", "/orders/{id}", Some("getOrder"), 12)],
            ..FileFacts::default()
        };
        let gateway = FileFacts {
            grpc: vec![
                GrpcFact::client("OrderService", Some("orders"), 2),
                GrpcFact::call("OrderService", "orders", "createOrder", 4),
            ],
            http: vec![HttpFact::call(Some("GET"), "/orders/{}", 6)],
            ..FileFacts::default()
        };
        let billing = FileFacts {
            events: vec![EventFact::at(
                EventRole::Consumer,
                FactValue::lit("orders.created"),
                "kafkajs",
                3,
            )],
            ..FileFacts::default()
        };
        Snapshot::from_facts(vec![
            ("services/orders", "proto/orders.proto", proto()),
            ("services/orders", "server.go", server),
            ("services/gateway", "src/app.js", gateway),
            ("services/billing", "src/consumer.ts", billing),
        ])
    }

    #[test]
    fn folds_links_per_service_pair_and_kind() {
        let snap = shop();
        let view = mesh_view(&snap, None, 40).unwrap();
        assert_eq!(view.services_total, 3);
        let name = |id: &str| view.nodes.iter().find(|n| n.id == id).unwrap().name.clone();
        let links: Vec<(String, String, LinkKind, u32)> = view
            .links
            .iter()
            .map(|l| (name(&l.from), name(&l.to), l.kind, l.count))
            .collect();
        for (from, to, kind, count) in [
            ("services/gateway", "services/orders", LinkKind::Grpc, 1),
            ("services/gateway", "services/orders", LinkKind::Http, 1),
            ("services/orders", "orders.created", LinkKind::Produces, 1),
            ("orders.created", "services/billing", LinkKind::Consumes, 1),
        ] {
            assert!(
                links.contains(&(from.into(), to.into(), kind, count)),
                "{from} → {to} {kind:?}: {links:?}"
            );
        }
        let gw = view
            .links
            .iter()
            .find(|l| l.kind == LinkKind::Grpc)
            .unwrap();
        assert_eq!(gw.example, "services/gateway/src/app.js:4");
    }

    #[test]
    fn a_framework_lifecycle_event_links_no_services() {
        let snap = Snapshot::of_listeners(&[
            (
                "services/cart",
                "src/Warmup.java",
                "ApplicationReadyEvent",
                crate::index::facts::FRAMEWORK_EVENT_VIA,
            ),
            (
                "services/orders",
                "src/Audit.java",
                "OrderAudited",
                "ApplicationEvent",
            ),
        ]);
        let view = mesh_view(&snap, None, 40).unwrap();
        let names: Vec<&str> = view.nodes.iter().map(|n| n.name.as_str()).collect();
        assert!(names.contains(&"OrderAudited"), "{names:?}");
        assert!(!names.contains(&"ApplicationReadyEvent"), "{names:?}");
    }

    #[test]
    fn zoom_folding_and_formats() {
        let snap = shop();
        let z = mesh_view(&snap, Some("orders"), 40).unwrap();
        assert!(z.nodes.iter().any(|n| n.name == "shop.v1.OrderService"));
        assert!(z.nodes.iter().any(|n| n.name == "GET /orders/{id}"));
        assert!(
            mesh_view(&snap, Some("nope"), 40)
                .unwrap_err()
                .contains("services/orders")
        );
        let small = mesh_view(&snap, None, 1).unwrap();
        assert_eq!(small.services_shown, 1);
        assert!(small.nodes.iter().any(|n| n.name == "other services"));
        let m = render_mermaid(&z);
        assert!(m.starts_with("%% ") && m.contains("graph LR"));
        assert!(m.contains("#123;id#125;"), "braces escaped: {m}");
        let html = render_html(&z);
        assert!(!html.contains("http://") || html.contains("http://www.w3.org/2000/svg"));
        assert!(!html.contains("<script src"));
        let json: serde_json::Value = serde_json::from_str(&render_json(&z)).unwrap();
        assert!(json["nodes"].as_array().unwrap().len() >= 3);
    }

    #[test]
    fn hostile_names_are_escaped() {
        let view = MeshView {
            workspace: "</script><script>alert(1)</script>".into(),
            grouping: "root",
            zoom: None,
            nodes: vec![MeshNode {
                id: "n0".into(),
                name: "a\"b<c>#d`e\nf".into(),
                kind: NodeKind::Service,
                caption: String::new(),
                location: None,
            }],
            links: vec![],
            services_shown: 1,
            services_total: 1,
            hidden: vec![],
            contracts_folded: 0,
            hidden_contracts: vec![],
            ambiguous_skipped: 0,
        };
        let html = render_html(&view);
        assert!(!html.contains("</script><script>alert"));
        let m = render_mermaid(&view);
        assert!(!m.contains("a\"b") && !m.contains('<') || m.contains("<br/>"));
        assert!(m.contains("a#quot;b#lt;c#gt;#35;d#96;e f"), "{m}");
    }
}
