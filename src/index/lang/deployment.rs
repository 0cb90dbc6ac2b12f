//! Deployment files: the environment variables docker-compose and Kubernetes set for a service.
//!
//! Real services read topic names and base URLs from the environment with no default in the
//! code (`os.Getenv("KAFKA_TOPIC")`, `${retail.orders.topic}` bound from
//! `RETAIL_ORDERS_TOPIC`); the value lives in a compose file or a manifest. This recogniser reads
//! those values from the YAML scanner's entries, so the resolver can answer with them (and say
//! where they were set) instead of leaving a hole.
//!
//! Read: a compose service's `environment:` (map or `- KEY=value` list) and its `build`
//! context; a Kubernetes container's `env:` (`name`/`value`, not `valueFrom`); a ConfigMap's
//! `data:` keys shaped like variable names. Values that are interpolated at deploy time
//! (`${TAG}`, Helm's `{{ … }}`) are skipped, except a compose default (`${T:-orders}`).

use super::yaml::{Entry, Seg, mask_value};
use crate::index::facts::EnvSetting;

/// The variables set by the deployment documents among `entries`, for a file named `lower`
/// (lowercased workspace path). Empty for YAML that is neither compose nor a manifest.
pub(super) fn env_settings(lower: &str, entries: &[Entry]) -> Vec<EnvSetting> {
    let mut out = Vec::new();
    if is_compose(lower, entries) {
        compose(entries, &mut out);
    }
    let docs = entries.iter().map(|e| e.doc).max().map_or(0, |d| d + 1);
    for doc in 0..docs {
        let of_doc: Vec<&Entry> = entries.iter().filter(|e| e.doc == doc).collect();
        kubernetes(&of_doc, &mut out);
    }
    out
}

/// A compose file by name (`docker-compose*.yml`, `compose*.yaml`), or a YAML whose top-level
/// `services` have an `image` or a `build`.
fn is_compose(lower: &str, entries: &[Entry]) -> bool {
    let name = lower.rsplit('/').next().unwrap_or(lower);
    if name.starts_with("docker-compose") || name.starts_with("compose.") {
        return true;
    }
    entries.iter().any(|e| {
        e.path.len() == 3
            && key(e, 0) == Some("services")
            && matches!(key(e, 2), Some("image" | "build"))
    })
}

fn key(e: &Entry, i: usize) -> Option<&str> {
    match e.path.get(i) {
        Some(Seg::Key(k)) => Some(k.as_str()),
        _ => None,
    }
}

/// `services.<name>.environment` in both forms, with the service's build context.
fn compose(entries: &[Entry], out: &mut Vec<EnvSetting>) {
    let context_of = |service: &str| {
        entries.iter().find_map(|e| {
            let is_build = key(e, 0) == Some("services")
                && key(e, 1) == Some(service)
                && key(e, 2) == Some("build");
            let short = e.path.len() == 3;
            let long = e.path.len() == 4 && key(e, 3) == Some("context");
            (is_build && (short || long))
                .then(|| e.value.clone())
                .flatten()
                .filter(|v| !v.is_empty() && !v.contains("${"))
        })
    };
    for e in entries {
        if key(e, 0) != Some("services") || key(e, 2) != Some("environment") || e.path.len() != 4 {
            continue;
        }
        let (Some(service), Some(raw)) = (key(e, 1), e.value.as_deref()) else {
            continue;
        };
        let (var, value) = match &e.path[3] {
            Seg::Key(k) => (k.as_str(), raw),
            // `- KEY=value`; a bare `- KEY` passes the host's value through: nothing to read.
            Seg::Index(_) => match raw.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => continue,
            },
        };
        push(out, var, value, e.line, service, context_of(service));
    }
}

/// Kubernetes `…containers[i].env[j].{name,value}` and ConfigMap `data`, in one document.
fn kubernetes(doc: &[&Entry], out: &mut Vec<EnvSetting>) {
    let top = |k: &str| {
        doc.iter()
            .find(|e| e.path.len() == 1 && key(e, 0) == Some(k))
            .and_then(|e| e.value.as_deref())
    };
    let Some(kind) = top("kind") else {
        return;
    };
    let workload = doc
        .iter()
        .find(|e| e.path.len() == 2 && key(e, 0) == Some("metadata") && key(e, 1) == Some("name"))
        .and_then(|e| e.value.clone())
        .unwrap_or_default();
    if kind == "ConfigMap" {
        for e in doc {
            if e.path.len() == 2
                && key(e, 0) == Some("data")
                && let (Some(var), Some(v)) = (key(e, 1), e.value.as_deref())
            {
                push(out, var, v, e.line, &workload, None);
            }
        }
        return;
    }
    for e in doc {
        let n = e.path.len();
        if n < 3 || key(e, n - 1) != Some("name") || key(e, n - 3) != Some("env") {
            continue;
        }
        let Some(var) = e.value.as_deref() else {
            continue;
        };
        let item = &e.path[..n - 1];
        let value = doc.iter().find(|v| {
            v.path.len() == n && v.path[..n - 1] == *item && key(v, n - 1) == Some("value")
        });
        let Some(value) = value.and_then(|v| v.value.as_deref().map(|s| (s, v.line))) else {
            continue;
        };
        // The container's own name (`containers[0].name`), else the workload's.
        let container = &e.path[..n - 3];
        let service = doc
            .iter()
            .find(|c| {
                c.path.len() == container.len() + 1
                    && c.path[..container.len()] == *container
                    && key(c, container.len()) == Some("name")
            })
            .and_then(|c| c.value.clone())
            .filter(|s| !s.contains("{{"))
            .unwrap_or_else(|| workload.clone());
        push(out, var, value.0, value.1, &service, None);
    }
}

/// Records `var = value` when both are readable: a variable-shaped name and a value that is
/// not interpolated at deploy time. A compose default (`${T:-orders}`) is the value.
fn push(
    out: &mut Vec<EnvSetting>,
    var: &str,
    value: &str,
    line: u32,
    service: &str,
    context: Option<String>,
) {
    let var_shaped = var
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !var_shaped || value.is_empty() || value.contains("{{") {
        return;
    }
    let value = match compose_default(value) {
        Some(d) => d,
        None if value.contains('$') && value.replace("$$", "").contains('$') => return,
        None => value.replace("$$", "$"),
    };
    if value.is_empty() {
        return;
    }
    out.push(EnvSetting {
        value: mask_value(var, &value),
        var: var.to_string(),
        line,
        service: service.to_string(),
        context,
    });
}

/// The default of a value that is one compose interpolation with a default:
/// `${T:-orders}` or `${T-orders}`.
fn compose_default(v: &str) -> Option<String> {
    let inner = v.strip_prefix("${")?.strip_suffix('}')?;
    let (name, default) = inner.split_once('-')?;
    let name = name.strip_suffix(':').unwrap_or(name);
    let plain = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (plain && !default.contains(['$', '{', '}'])).then(|| default.to_string())
}

#[cfg(test)]
mod tests {
    use crate::index::facts::EnvSetting;

    fn settings(path: &str, text: &str) -> Vec<(String, String, u32, String, Option<String>)> {
        super::super::yaml::extract(path, text)
            .env_settings
            .into_iter()
            .map(|s: EnvSetting| (s.var, s.value, s.line, s.service, s.context))
            .collect()
    }

    fn row(var: &str, value: &str, line: u32, service: &str) -> (String, String, u32, String) {
        (var.into(), value.into(), line, service.into())
    }

    fn rows(path: &str, text: &str) -> Vec<(String, String, u32, String)> {
        settings(path, text)
            .into_iter()
            .map(|(a, b, c, d, _)| (a, b, c, d))
            .collect()
    }

    #[test]
    fn compose_environment_in_both_forms_with_the_build_context() {
        let src = "services:\n  orders:\n    build:\n      context: ./orders\n    environment:\n      KAFKA_TOPIC: orders\n      BROKER: \"kafka:9092\"\n      TAG: ${TAG}\n  ship:\n    build: ../ship\n    environment:\n      - SHIP_TOPIC=shipments\n      - PASSTHROUGH\n      - DEFAULTED=${SHIP_Q:-ship-queue}\n      - DOLLAR=a$$b\n";
        let got = settings("deploy/docker-compose.yml", src);
        assert_eq!(
            got,
            vec![
                (
                    "KAFKA_TOPIC".into(),
                    "orders".into(),
                    6,
                    "orders".into(),
                    Some("./orders".into())
                ),
                (
                    "BROKER".into(),
                    "kafka:9092".into(),
                    7,
                    "orders".into(),
                    Some("./orders".into())
                ),
                (
                    "SHIP_TOPIC".into(),
                    "shipments".into(),
                    12,
                    "ship".into(),
                    Some("../ship".into())
                ),
                (
                    "DEFAULTED".into(),
                    "ship-queue".into(),
                    14,
                    "ship".into(),
                    Some("../ship".into())
                ),
                (
                    "DOLLAR".into(),
                    "a$b".into(),
                    15,
                    "ship".into(),
                    Some("../ship".into())
                ),
            ]
        );
    }

    #[test]
    fn compose_secrets_are_masked_and_other_yaml_sets_nothing() {
        let src = "services:\n  db:\n    image: postgres\n    environment:\n      POSTGRES_PASSWORD: hunter2\n";
        let got = rows("stack.yml", src);
        assert_eq!(got.len(), 1);
        assert_ne!(got[0].1, "hunter2");
        // `services` without image or build, in a file not named like compose: not compose.
        assert!(
            rows(
                "config.yml",
                "services:\n  a:\n    environment:\n      X: y\n"
            )
            .is_empty()
        );
        assert!(rows("application.yml", "spring:\n  kafka:\n    topic: t\n").is_empty());
    }

    #[test]
    fn kubernetes_container_env_and_configmap_data() {
        let src = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: orders-deploy\nspec:\n  template:\n    spec:\n      containers:\n        - name: orders\n          env:\n            - name: ORDERS_TOPIC\n              value: \"orders.v1\"\n            - name: FROM_SECRET\n              valueFrom:\n                secretKeyRef: {name: s, key: k}\n            - name: HELM\n              value: {{ .Values.topic }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  PAYMENTS_URL: http://payments:8080\n  application.yml: |\n    a: b\n";
        assert_eq!(
            rows("k8s/orders.yaml", src),
            vec![
                row("ORDERS_TOPIC", "orders.v1", 12, "orders"),
                row("PAYMENTS_URL", "http://payments:8080", 24, "shared"),
            ]
        );
    }

    #[test]
    fn odd_input_never_panics_and_reads_nothing_wrong() {
        for src in [
            "services:\n  é:\n    image: x\n    environment:\n      - =v\n      - 'Ü=1'\n      - K=\n",
            "kind: Deployment\nspec:\n  env:\n    - name:\n      value:\n",
            "services: [a, b]\n",
            "kind:\n",
            "services:\n  a:\n    build:\n    environment:\n      X: ${Y:-}\n      Z: ${A:-${B}}\n",
        ] {
            for s in rows("docker-compose.yml", src) {
                assert!(!s.0.is_empty() && !s.1.is_empty(), "{src:?} gave {s:?}");
                assert!(!s.1.contains('$'), "{src:?} gave {s:?}");
            }
        }
    }
}
