//! Rendering a view: Mermaid (and the tool's Markdown answer around it), JSON and a
//! standalone HTML page.

use super::view::{LinkKind, MeshView, NodeKind};
use crate::render::inline_code;

/// Escapes a name for a Mermaid label (entity codes; newlines flattened).
fn mermaid_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            '`' => out.push_str("#96;"),
            '&' => out.push_str("#amp;"),
            '|' => out.push_str("#124;"),
            '[' => out.push_str("#91;"),
            ']' => out.push_str("#93;"),
            '{' => out.push_str("#123;"),
            '}' => out.push_str("#125;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Renders the view as a Mermaid flowchart (without the Markdown around it).
pub fn render_mermaid(view: &MeshView) -> String {
    let mut out = format!(
        "%% {} — services and how they talk\ngraph LR\n",
        mermaid_escape(&view.workspace)
    );
    for n in &view.nodes {
        let label = format!(
            "\"{}<br/><small>{}</small>\"",
            mermaid_escape(&n.name),
            mermaid_escape(&n.caption)
        );
        let shape = match n.kind {
            NodeKind::Service => format!("[{label}]"),
            NodeKind::Topic => format!("([{label}])"),
            NodeKind::Contract => format!("({label})"),
            NodeKind::Other => format!("[/{label}/]"),
        };
        out.push_str(&format!("  {}{}\n", n.id, shape));
    }
    for l in &view.links {
        let mut label = l.kind.label().to_string();
        if l.count > 1 {
            label.push_str(&format!(" ×{}", l.count));
        }
        if !l.confidence_counts.is_uniform() {
            label.push_str(&format!(" ({})", l.confidence_counts.describe()));
        } else if l.confidence != "exact" {
            label.push_str(&format!(" ({})", l.confidence));
        }
        let arrow = match l.kind {
            LinkKind::Produces => "==>",
            LinkKind::Consumes => "-.->",
            _ => "-->",
        };
        out.push_str(&format!(
            "  {} {}|\"{}\"| {}\n",
            l.from,
            arrow,
            mermaid_escape(&label),
            l.to
        ));
    }
    out
}

/// Renders the view as pretty JSON.
pub fn render_json(view: &MeshView) -> String {
    serde_json::to_string_pretty(view).unwrap_or_else(|_| "{}".into())
}

/// Renders the view as a standalone HTML page: the data inline, drawn as SVG by an inline
/// script, no network access. Names reach the page only through `textContent`.
pub fn render_html(view: &MeshView) -> String {
    let data = serde_json::to_string(view)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let title = html_escape(&format!("{} — mesh-mcp", view.workspace));
    HTML_TEMPLATE
        .replace("__TITLE__", &title)
        .replace("__DATA__", &data)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const HTML_TEMPLATE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>__TITLE__</title>
<style>
body{margin:0;font:13px system-ui,sans-serif;background:#fafafa;color:#222}
header{padding:10px 16px;border-bottom:1px solid #ddd;background:#fff}
h1{font-size:16px;margin:0}#meta{color:#666;margin-top:4px}
svg{display:block;width:100vw;height:calc(100vh - 60px)}
.node rect,.node ellipse{stroke:#333;stroke-width:1.2}
.service rect{fill:#dbeafe}.topic ellipse{fill:#fef3c7}.contract rect{fill:#dcfce7}.other rect{fill:#eee}
.link{fill:none;stroke:#666;stroke-width:1.4}.produces{stroke:#b45309;stroke-width:2.4}
.consumes{stroke:#b45309;stroke-dasharray:5 4}.grpc{stroke:#1d4ed8}.http{stroke:#15803d}
.imports{stroke:#999;stroke-dasharray:2 3}
.heuristic,.ambiguous{opacity:.6}
text{pointer-events:none}.cap{fill:#555;font-size:11px}.ll{fill:#444;font-size:11px}
</style></head><body>
<header><h1 id="title"></h1><div id="meta"></div></header>
<svg id="mesh" role="img" aria-label="service mesh"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs></svg>
<script>
"use strict";
const view = __DATA__;
const NS = "http://www.w3.org/2000/svg";
document.getElementById("title").textContent = view.workspace + (view.zoom ? " — " + view.zoom : "");
document.getElementById("meta").textContent = view.services_shown + " of " + view.services_total +
  " services, " + view.links.length + " links (grouping: one service per " + view.grouping + ")";
const svg = document.getElementById("mesh");
// Force-directed layout, deterministic: nodes start on a circle in listing order, links pull,
// every pair pushes (by box size), the temperature cools; then boxes are pushed apart until
// none overlap and the drawing is fitted to the page.
const outgoing = {}, incoming = {};
for (const l of view.links) { (outgoing[l.from] = outgoing[l.from] || []).push(l.to); (incoming[l.to] = incoming[l.to] || []).push(l.from); }
const width = n => Math.max(90, Math.min(260, 7.2 * Math.max(n.name.length, n.caption.length) + 20));
const linked = n => (outgoing[n.id] || []).length + (incoming[n.id] || []).length > 0;
const nodes = view.nodes.filter(linked).map((n, i, all) => {
  const a = 2 * Math.PI * i / Math.max(1, all.length);
  return { n, id: n.id, w: width(n), x: Math.cos(a) * 300, y: Math.sin(a) * 300, dx: 0, dy: 0 };
});
const byId = {};
for (const p of nodes) byId[p.id] = p;
const k = 120;
let temp = 60;
for (let it = 0; it < 500; it++) {
  for (const p of nodes) { p.dx = 0; p.dy = 0; }
  for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) {
    const a = nodes[i], b = nodes[j];
    const dx = a.x - b.x, dy = a.y - b.y, d = Math.max(1, Math.hypot(dx, dy));
    const f = (k * k) / d;
    a.dx += dx / d * f; a.dy += dy / d * f; b.dx -= dx / d * f; b.dy -= dy / d * f;
  }
  for (const l of view.links) {
    const a = byId[l.from], b = byId[l.to];
    if (!a || !b || a === b) continue;
    const dx = a.x - b.x, dy = a.y - b.y, d = Math.max(1, Math.hypot(dx, dy));
    const f = (d * d) / k;
    a.dx -= dx / d * f; a.dy -= dy / d * f; b.dx += dx / d * f; b.dy += dy / d * f;
  }
  for (const p of nodes) {
    p.dx -= p.x * 0.05; p.dy -= p.y * 0.05;
    const d = Math.max(1e-9, Math.hypot(p.dx, p.dy));
    const step = Math.min(d, temp);
    p.x += p.dx / d * step; p.y += p.dy / d * step;
  }
  temp = Math.max(0.5, temp * 0.99);
}
// Stretch to the page's proportions (boxes are wide: give them horizontal room).
if (nodes.length > 1) {
  const x0 = Math.min(...nodes.map(p => p.x)), x1 = Math.max(...nodes.map(p => p.x));
  const y0 = Math.min(...nodes.map(p => p.y)), y1 = Math.max(...nodes.map(p => p.y));
  const cols = Math.max(2, Math.ceil(Math.sqrt(nodes.length * 1.8)));
  const spanX = cols * 230, spanY = Math.max(220, Math.ceil(nodes.length / cols) * 110);
  for (const p of nodes) {
    p.x = x1 > x0 ? (p.x - x0) / (x1 - x0) * spanX : 0;
    p.y = y1 > y0 ? (p.y - y0) / (y1 - y0) * spanY : 0;
  }
}
// Unlinked services in a row below.
const lone = view.nodes.filter(n => !linked(n));
{
  const bottom = nodes.length ? Math.max(...nodes.map(p => p.y)) + 110 : 0;
  let x = 0;
  for (const n of lone) {
    const w = width(n);
    nodes.push({ n, id: n.id, w, x: x + w / 2, y: bottom, dx: 0, dy: 0 });
    x += w + 30;
  }
  for (const p of nodes) byId[p.id] = p;
}
for (let pass = 0; pass < 200; pass++) {
  let moved = false;
  for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) {
    const a = nodes[i], b = nodes[j];
    const ox = (a.w + b.w) / 2 + 24 - Math.abs(a.x - b.x), oy = 44 + 26 - Math.abs(a.y - b.y);
    if (ox > 0 && oy > 0) {
      moved = true;
      if (oy < ox) { const s = (a.y < b.y ? -1 : 1) * oy / 2; a.y += s; b.y -= s; }
      else { const s = (a.x < b.x ? -1 : 1) * ox / 2; a.x += s; b.x -= s; }
    }
  }
  if (!moved) break;
}
const minX = Math.min(...nodes.map(p => p.x - p.w / 2)), maxX = Math.max(...nodes.map(p => p.x + p.w / 2));
const minY = Math.min(...nodes.map(p => p.y - 22)), maxY = Math.max(...nodes.map(p => p.y + 22));
const pad = 40;
svg.setAttribute("viewBox", `${minX - pad} ${minY - pad} ${Math.max(1, maxX - minX) + 2 * pad} ${Math.max(1, maxY - minY) + 2 * pad}`);
const pos = {};
for (const p of nodes) pos[p.id] = p;
// Where the segment from the centre of `p` toward (tx, ty) leaves its box.
const exit = (p, tx, ty) => {
  const dx = tx - p.x, dy = ty - p.y;
  const sx = dx === 0 ? Infinity : (p.w / 2) / Math.abs(dx), sy = dy === 0 ? Infinity : 22 / Math.abs(dy);
  const s = Math.min(sx, sy, 1);
  return [p.x + dx * s, p.y + dy * s];
};
const el = (tag, attrs, parent) => { const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); (parent || svg).appendChild(e); return e; };
for (const l of view.links) {
  const a = pos[l.from], b = pos[l.to];
  if (!a || !b) continue;
  // A slight bend keeps two links between the same pair apart.
  const mx = (a.x + b.x) / 2 - (b.y - a.y) * 0.12, my = (a.y + b.y) / 2 + (b.x - a.x) * 0.12;
  const [x1, y1] = exit(a, mx, my), [x2, y2] = exit(b, mx, my);
  const p = el("path", { d: `M${x1},${y1} Q${mx},${my} ${x2},${y2}`, class: `link ${l.kind} ${l.confidence}`, "marker-end": "url(#arrow)" });
  const t = document.createElementNS(NS, "title"); t.textContent = `${l.kind} ×${l.count} (${l.confidence}) e.g. ${l.example}`; p.appendChild(t);
  const lab = el("text", { x: (x1 + 2 * mx + x2) / 4, y: (y1 + 2 * my + y2) / 4 - 4, "text-anchor": "middle", class: "ll" });
  lab.textContent = l.kind + (l.count > 1 ? " ×" + l.count : "");
}
for (const n of view.nodes) {
  const p = pos[n.id];
  const g = el("g", { class: "node " + n.kind, transform: `translate(${p.x},${p.y})` });
  if (n.kind === "topic") el("ellipse", { rx: p.w / 2, ry: 22 }, g);
  else el("rect", { x: -p.w / 2, y: -22, width: p.w, height: 44, rx: n.kind === "contract" ? 16 : 4 }, g);
  const name = el("text", { y: -3, "text-anchor": "middle" }, g); name.textContent = n.name;
  const cap = el("text", { y: 13, "text-anchor": "middle", class: "cap" }, g); cap.textContent = n.caption;
  const t = document.createElementNS(NS, "title"); t.textContent = n.name + (n.location ? " — " + n.location : ""); g.appendChild(t);
}
</script></body></html>
"##;

/// The Mermaid answer: heading, diagram and a footer saying what was folded.
pub(super) fn mermaid_answer(view: &MeshView) -> String {
    let mut out = String::from("## Service mesh");
    if let Some(z) = &view.zoom {
        out.push_str(&format!(" — service {}", inline_code(z)));
    }
    out.push_str("\n\n```mermaid\n");
    out.push_str(&render_mermaid(view));
    out.push_str("```\n\n");
    let sites: u32 = view.links.iter().map(|l| l.count).sum();
    out.push_str(&format!(
        "_{} links folding {sites} sites between {} of {} services (one service per {})._\n",
        view.links.len(),
        view.services_shown,
        view.services_total,
        view.grouping
    ));
    if !view.hidden.is_empty() {
        let hidden: Vec<String> = view
            .hidden
            .iter()
            .map(|(n, f)| format!("{} ({f} files)", inline_code(n)))
            .collect();
        out.push_str(&format!(
            "_{} services are folded into \"other services\". Largest hidden: {}._\n",
            view.services_total - view.services_shown,
            hidden.join(", ")
        ));
    }
    if let (Some(z), Some(first)) = (&view.zoom, view.hidden_contracts.first()) {
        let shown = view
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Contract)
            .count();
        let tool = if first.contains(' ') {
            "analyze_impact"
        } else {
            "analyze_grpc"
        };
        let names: Vec<String> = view
            .hidden_contracts
            .iter()
            .map(|n| inline_code(n))
            .collect();
        out.push_str(&format!(
            "_Showing {shown} of {} contracts of {} (the most called first); {} more are folded \
into \"other contracts\", e.g. {}. Next: {tool}(target: \"{}\") for one of them, or \
{}._\n",
            shown + view.contracts_folded,
            inline_code(z),
            view.contracts_folded,
            names.join(", "),
            first.replace(['"', '\\', '\n'], " "),
            if shown < 200 {
                format!(
                    "visualize_mesh(service: \"{}\", max_services: {}) for more",
                    z.replace(['"', '\\', '\n'], " "),
                    (shown * 2).clamp(1, 200)
                )
            } else {
                "smart_search or analyze_impact for the rest".to_string()
            },
        ));
    }
    if view.ambiguous_skipped > 0 {
        out.push_str(&format!(
            "_{} ambiguous call(s) whose candidates span several services are not drawn._\n",
            view.ambiguous_skipped
        ));
    }
    if view.zoom.is_none()
        && let Some(first) = view.nodes.iter().find(|n| n.kind == NodeKind::Service)
    {
        out.push_str(&format!(
            "_Zoom into one service: visualize_mesh(service: \"{}\")._\n",
            first.name
        ));
    }
    if view.links.is_empty() {
        out.push_str(
            "_No gRPC, HTTP, event or import link between services was found in the index._\n",
        );
    }
    out
}
