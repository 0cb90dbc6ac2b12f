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
use crate::index::facts::{EnvSetting, FileFacts, HttpFact};

/// Adds what the deployment documents among `entries` say to `facts`: the variables they set
/// and the health checks they run ([`HttpFact::Probe`]), for a file named `lower`
/// (lowercased workspace path). Nothing for YAML that is neither compose nor a manifest.
pub(super) fn deployment_facts(lower: &str, entries: &[Entry], facts: &mut FileFacts) {
    if is_compose(lower, entries) {
        compose(entries, &mut facts.env_settings);
        compose_health_checks(entries, &mut facts.http);
    }
    // The scanner emits entries in line order, so a document's entries are contiguous.
    for doc in entries.chunk_by(|a, b| a.doc == b.doc) {
        kubernetes(doc, &mut facts.env_settings, &mut facts.http);
    }
}

/// The entries around `doc[i]` that share its first `depth` path segments: the subtree it is
/// in (contiguous, as the scanner emits entries in line order), so a sibling or a container's
/// name is looked up there and not across the whole document.
fn subtree(doc: &[Entry], i: usize, depth: usize) -> &[Entry] {
    let prefix = &doc[i].path[..depth.min(doc[i].path.len())];
    let inside = |e: &Entry| e.path.starts_with(prefix);
    let lo = doc[..i]
        .iter()
        .rposition(|e| !inside(e))
        .map_or(0, |j| j + 1);
    let hi = doc[i..]
        .iter()
        .position(|e| !inside(e))
        .map_or(doc.len(), |j| i + j);
    &doc[lo..hi]
}

/// A compose `healthcheck.test` that fetches a URL of the container itself
/// (`["CMD", "curl", "-f", "http://localhost:8080/health"]`, `curl … || exit 1`, `wget`).
fn compose_health_checks(entries: &[Entry], out: &mut Vec<HttpFact>) {
    for (i, e) in entries.iter().enumerate() {
        let is_test = e.path.len() == 4
            && key(e, 0) == Some("services")
            && key(e, 2) == Some("healthcheck")
            && key(e, 3) == Some("test");
        let Some(service) = key(e, 1).filter(|_| is_test) else {
            continue;
        };
        // The command as one line: a scalar or flow list, or the items of a block list.
        let command = match &e.value {
            Some(v) => v.clone(),
            None => entries[i + 1..]
                .iter()
                .take_while(|c| c.path.len() > 4 && c.path[..4] == e.path[..])
                .filter_map(|c| c.value.as_deref())
                .collect::<Vec<_>>()
                .join(" "),
        };
        if let Some(path) = own_url_path(&command) {
            // The tool and the URL's path only: the rest of the command may hold credentials
            // (`curl -u admin:pw …`, `-H 'Authorization: Bearer …'`, a query `?token=…`).
            let words = shell_words(&command);
            let tool = words.split_whitespace().next().unwrap_or("");
            out.push(HttpFact::Probe {
                service: service.to_string(),
                shown: format!("healthcheck {tool} {path}"),
                path,
                line: e.line,
            });
        }
    }
}

/// A compose test command as a person reads it: `["CMD", "curl", "-f", "http://x"]` is
/// `curl -f http://x`; the `CMD`/`CMD-SHELL` marker is dropped.
fn shell_words(command: &str) -> String {
    let c = command.trim();
    let Some(list) = c.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
        return c.strip_prefix("CMD-SHELL ").unwrap_or(c).to_string();
    };
    list.split(',')
        .map(|w| w.trim().trim_matches(['"', '\'']))
        .filter(|w| !w.is_empty() && *w != "CMD" && *w != "CMD-SHELL")
        .collect::<Vec<_>>()
        .join(" ")
}

/// The path of the first URL in `command` when its host is the container itself
/// (`localhost`, `127.0.0.1`, `0.0.0.0`, `[::1]`): `/health` of `http://localhost:8080/health`.
fn own_url_path(command: &str) -> Option<String> {
    let at = command
        .find("http://")
        .or_else(|| command.find("https://"))?;
    let url = &command[at..];
    let end = url
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ']' | ';'))
        .unwrap_or(url.len());
    let rest = url[..end].split_once("://")?.1;
    let (authority, path) = match rest.find('/') {
        Some(slash) => rest.split_at(slash),
        None => (rest, "/"),
    };
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => authority.split(':').next().unwrap_or(authority),
    };
    let own = !authority.contains('@') && is_own_host(host);
    let path = path.split(['?', '#']).next().unwrap_or(path);
    (own && !path.contains(['$', '{'])).then(|| path.to_string())
}

/// The container itself, as a health check names it.
fn is_own_host(host: &str) -> bool {
    matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "0.0.0.0" | "::1"
    )
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
    // Each service's build context (`build: ./x` or `build.context`), read once.
    let mut contexts: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for e in entries {
        let is_build = key(e, 0) == Some("services") && key(e, 2) == Some("build");
        let short = e.path.len() == 3;
        let long = e.path.len() == 4 && key(e, 3) == Some("context");
        if let (true, Some(service), Some(v)) = (is_build && (short || long), key(e, 1), &e.value)
            && !v.is_empty()
            && !v.contains("${")
        {
            contexts.entry(service).or_insert(v);
        }
    }
    let context_of = |service: &str| contexts.get(service).map(|c| c.to_string());
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

/// Kubernetes `…containers[i].env[j].{name,value}`, ConfigMap `data` and container
/// `httpGet` probes, in one document.
fn kubernetes(doc: &[Entry], out: &mut Vec<EnvSetting>, http: &mut Vec<HttpFact>) {
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
        // A Helm template (`{{ .Release.Name }}-config`) names nothing.
        .filter(|n| !n.contains("{{"))
        .unwrap_or_default();
    // The name of the container holding `doc[i]` whose path is `depth` segments long
    // (`…containers[i]`), else the workload's; a Helm template (`{{ .Chart.Name }}`) names
    // nothing.
    let service_of = |i: usize, depth: usize| {
        subtree(doc, i, depth)
            .iter()
            .find(|c| c.path.len() == depth + 1 && key(c, depth) == Some("name"))
            .and_then(|c| c.value.clone())
            .filter(|s| !s.contains("{{"))
            .unwrap_or_else(|| workload.clone())
    };
    probes(doc, &service_of, http);
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
    for (i, e) in doc.iter().enumerate() {
        let n = e.path.len();
        if n < 3 || key(e, n - 1) != Some("name") || key(e, n - 3) != Some("env") {
            continue;
        }
        let Some(var) = e.value.as_deref() else {
            continue;
        };
        let value = subtree(doc, i, n - 1)
            .iter()
            .find(|v| v.path.len() == n && key(v, n - 1) == Some("value"));
        let Some(value) = value.and_then(|v| v.value.as_deref().map(|s| (s, v.line))) else {
            continue;
        };
        let service = service_of(i, n - 3);
        push(out, var, value.0, value.1, &service, None);
    }
}

/// `livenessProbe`, `readinessProbe` and `startupProbe` with `httpGet.path`.
fn probes(doc: &[Entry], service_of: &dyn Fn(usize, usize) -> String, out: &mut Vec<HttpFact>) {
    for (i, e) in doc.iter().enumerate() {
        let n = e.path.len();
        if n < 3 || key(e, n - 1) != Some("path") || key(e, n - 2) != Some("httpGet") {
            continue;
        }
        let Some(probe) = key(e, n - 3).filter(|p| p.ends_with("Probe")) else {
            continue;
        };
        let Some(path) = e
            .value
            .as_deref()
            .filter(|p| p.starts_with('/') && !p.contains("{{"))
        else {
            continue;
        };
        let sibling = |name: &str| {
            subtree(doc, i, n - 1)
                .iter()
                .find(|p| p.path.len() == n && key(p, n - 1) == Some(name))
                .and_then(|p| p.value.as_deref())
        };
        // `httpGet.host` other than the pod itself probes another host: not a self-call.
        if sibling("host")
            .is_some_and(|h| !h.is_empty() && !is_own_host(h.trim_matches(['[', ']'])))
        {
            continue;
        }
        let port = sibling("port").filter(|p| !p.contains("{{"));
        let shown = match port {
            Some(port) => format!("{probe} httpGet :{port}{path}"),
            None => format!("{probe} httpGet {path}"),
        };
        out.push(HttpFact::Probe {
            service: service_of(i, n - 3),
            path: path.to_string(),
            shown,
            line: e.line,
        });
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
    use crate::index::facts::{EnvSetting, HttpFact};

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
        assert_eq!(
            rows("deploy/docker-compose.yml", src),
            vec![
                row("KAFKA_TOPIC", "orders", 6, "orders"),
                row("BROKER", "kafka:9092", 7, "orders"),
                row("SHIP_TOPIC", "shipments", 12, "ship"),
                row("DEFAULTED", "ship-queue", 14, "ship"),
                row("DOLLAR", "a$b", 15, "ship"),
            ]
        );
        // Each setting carries its service's build context.
        let contexts: Vec<Option<String>> = settings("deploy/docker-compose.yml", src)
            .into_iter()
            .map(|s| s.4)
            .collect();
        let (orders, ship) = (Some("./orders".to_string()), Some("../ship".to_string()));
        assert_eq!(
            contexts,
            [orders.clone(), orders, ship.clone(), ship.clone(), ship]
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

    fn probes(path: &str, text: &str) -> Vec<(String, String, String, u32)> {
        super::super::yaml::extract(path, text)
            .http
            .into_iter()
            .filter_map(|h| match h {
                HttpFact::Probe {
                    service,
                    path,
                    shown,
                    line,
                } => Some((service, path, shown, line)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn compose_health_checks_of_the_container_itself_are_probes() {
        let src = "services:\n  shipping:\n    image: s\n    healthcheck:\n      test: [\"CMD\", \"curl\", \"-f\", \"http://localhost:8080/health\"]\n  web:\n    image: w\n    healthcheck:\n      test:\n        - CMD-SHELL\n        - curl -f http://127.0.0.1/_health?x=1 || exit 1\n  db:\n    image: postgres\n    healthcheck:\n      test: [\"CMD-SHELL\", \"pg_isready\"]\n  other:\n    image: o\n    healthcheck:\n      test: curl -f http://catalog:8080/health\n  plain:\n    image: p\n    healthcheck:\n      test: wget -q -O- http://[::1]:9000\n";
        let all = probes("docker-compose.yaml", src);
        assert_eq!(all[0].2, "healthcheck curl /health");
        assert_eq!(all[1].2, "healthcheck curl /_health");
        let got: Vec<(&str, &str, u32)> = all
            .iter()
            .map(|(s, p, _, l)| (s.as_str(), p.as_str(), *l))
            .collect();
        assert_eq!(
            got,
            [
                ("shipping", "/health", 5),
                ("web", "/_health", 9),
                ("plain", "/", 23)
            ]
        );
    }

    #[test]
    fn kubernetes_http_probes_name_their_container() {
        let src = "kind: Deployment\nmetadata:\n  name: ratings\nspec:\n  template:\n    spec:\n      containers:\n        - name: '{{ .Chart.Name }}'\n          readinessProbe:\n            httpGet:\n              path: /_health\n              port: 80\n          livenessProbe:\n            exec:\n              command: [cat, /tmp/ok]\n          startupProbe:\n            httpGet:\n              path: '{{ .Values.path }}'\n";
        assert_eq!(
            probes("k8s/ratings.yaml", src),
            vec![(
                "ratings".into(),
                "/_health".into(),
                "readinessProbe httpGet :80/_health".into(),
                11
            )]
        );
    }

    #[test]
    fn a_health_check_never_shows_its_credentials() {
        let src = "services:\n  a:\n    image: a\n    healthcheck:\n      test: [\"CMD\", \"curl\", \"-f\", \"-u\", \"admin:s3cr3t\", \"-H\", \"Authorization: Bearer tok3n\", \"http://localhost:8080/health?token=t0k\"]\n  b:\n    image: b\n    healthcheck:\n      test: curl -f http://user:pw@localhost:8080/health\n";
        let all = probes("docker-compose.yml", src);
        assert_eq!(all.len(), 1, "{all:?}");
        for secret in ["s3cr3t", "tok3n", "t0k", "pw@"] {
            assert!(!all[0].2.contains(secret), "{all:?}");
        }
    }

    #[test]
    fn a_kubernetes_probe_of_another_host_is_not_a_self_call() {
        let src = "kind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          livenessProbe:\n            httpGet:\n              host: catalog\n              path: /health\n              port: 80\n          readinessProbe:\n            httpGet:\n              host: LOCALHOST\n              path: /ready\n";
        let got: Vec<String> = probes("k8s/web.yaml", src)
            .into_iter()
            .map(|p| p.1)
            .collect();
        assert_eq!(got, vec!["/ready".to_string()]);
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
