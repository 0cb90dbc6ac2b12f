//! The aggregated view: its nodes and links, what each stands for, and the confidence counts of a link.

use serde::Serialize;

use crate::index::graph::Confidence;

/// What a node of the picture stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Service,
    Topic,
    /// A contract of the zoomed service (gRPC service, route, …).
    Contract,
    /// Folded services or topics.
    Other,
}

/// What a link of the picture stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    Grpc,
    Http,
    Produces,
    Consumes,
    Imports,
    /// A zoomed service's own contract (service → contract).
    Owns,
}

impl LinkKind {
    pub(super) fn label(self) -> &'static str {
        match self {
            LinkKind::Grpc => "gRPC",
            LinkKind::Http => "HTTP",
            LinkKind::Produces => "produces",
            LinkKind::Consumes => "consumes",
            LinkKind::Imports => "imports",
            LinkKind::Owns => "owns",
        }
    }
}

/// A node of the aggregated view.
#[derive(Debug, Clone, Serialize)]
pub struct MeshNode {
    pub id: String,
    pub name: String,
    pub kind: NodeKind,
    /// A short description (`12 files · go, java`, `gRPC service`, `3 producers`).
    pub caption: String,
    /// Where it is declared (`services/orders/proto/orders.proto:4`), when it is one place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// A folded link of the aggregated view.
#[derive(Debug, Clone, Serialize)]
pub struct MeshLink {
    pub from: String,
    pub to: String,
    pub kind: LinkKind,
    /// How many sites (calls, producers, imports) this link folds.
    pub count: u32,
    /// The weakest confidence among them.
    pub confidence: &'static str,
    /// How many of the sites are exact, heuristic and ambiguous, when they differ (one
    /// ambiguous call among five says little about the other four).
    #[serde(skip_serializing_if = "ConfidenceCounts::is_uniform")]
    pub confidence_counts: ConfidenceCounts,
    /// One site, `path:line`, as evidence.
    pub example: String,
}

/// Sites of a link per confidence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConfidenceCounts {
    pub exact: u32,
    pub heuristic: u32,
    pub ambiguous: u32,
}

impl ConfidenceCounts {
    pub(super) fn add(&mut self, conf: Confidence, n: u32) {
        match conf {
            Confidence::Exact => self.exact += n,
            Confidence::Heuristic => self.heuristic += n,
            Confidence::Ambiguous => self.ambiguous += n,
        }
    }

    pub(super) fn sum(&mut self, other: ConfidenceCounts) {
        self.exact += other.exact;
        self.heuristic += other.heuristic;
        self.ambiguous += other.ambiguous;
    }

    /// True when at most one confidence has sites (the link's `confidence` says it all).
    pub(super) fn is_uniform(&self) -> bool {
        [self.exact, self.heuristic, self.ambiguous]
            .iter()
            .filter(|&&n| n > 0)
            .count()
            <= 1
    }

    /// `3 heuristic, 1 ambiguous`: the non-zero counts, strongest first.
    pub(super) fn describe(&self) -> String {
        [
            (self.exact, "exact"),
            (self.heuristic, "heuristic"),
            (self.ambiguous, "ambiguous"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// The aggregated picture.
#[derive(Debug, Clone, Serialize)]
pub struct MeshView {
    pub workspace: String,
    /// `root` (one service per root) or `directory` (single-root workspaces).
    pub grouping: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zoom: Option<String>,
    pub nodes: Vec<MeshNode>,
    pub links: Vec<MeshLink>,
    /// Services drawn / all services.
    pub services_shown: usize,
    pub services_total: usize,
    /// The largest folded services (name, files).
    pub hidden: Vec<(String, usize)>,
    /// Ambiguous links whose candidates span several services, not drawn.
    pub ambiguous_skipped: usize,
    /// Zoomed: the focus's contracts not drawn (beyond `max_services`, the busiest first),
    /// folded into one "other contracts" node.
    #[serde(skip_serializing_if = "is_zero")]
    pub contracts_folded: usize,
    /// Zoomed: the first few folded contracts, busiest first (each is a next call).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden_contracts: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
