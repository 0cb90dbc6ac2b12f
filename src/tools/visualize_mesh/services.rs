//! Services: the one a file belongs to, their names and sizes, finding one by name, ranking
//! them, and the services that use each library.

use std::collections::{BTreeMap, HashMap};

use super::links::Fold;
use super::view::LinkKind;
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;

/// Every service name `service` accepts (the groups of [`group_of`]), sorted: for resource
/// listings and argument completion.
pub fn service_names(snap: &Snapshot) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut last_root = None;
    for (i, f) in snap.files.iter().enumerate() {
        // With several roots a root is one service: one name per run of its files.
        if snap.roots.len() > 1 && last_root == Some(f.root) {
            continue;
        }
        last_root = Some(f.root);
        names.insert(group_of(snap, i as u32));
    }
    names.into_iter().collect()
}

/// The service a file belongs to: its root, or (single root) its top-level directory.
pub(super) fn group_of(snap: &Snapshot, file: u32) -> String {
    let f = &snap.files[file as usize];
    if snap.roots.len() > 1 {
        let label = &snap.roots[f.root as usize].label;
        return if label == "." {
            WORKSPACE_ROOT.to_string()
        } else {
            label.clone()
        };
    }
    match f.path.split_once('/') {
        Some((dir, _)) => dir.to_string(),
        None => WORKSPACE_ROOT.to_string(),
    }
}

/// The name of the service that holds the files directly in the workspace directory.
pub(super) const WORKSPACE_ROOT: &str = "(workspace root)";

/// The services that use each library root: the groups of the service files whose imports or
/// .NET project references land in it. A call made in a library is made by these services (a
/// Razor class library's HttpClient, a shared SDK): `visualize_mesh` starts its edge at each
/// of them, and `analyze_impact` names them beside the library's root, so both tools
/// attribute the same line alike.
pub(crate) fn library_users(snap: &Snapshot) -> HashMap<u16, Vec<String>> {
    let mut users: HashMap<u16, Vec<String>> = HashMap::new();
    for ie in &snap.graph.import_links {
        let f = &snap.files[ie.at.file as usize];
        if !f.is_test
            && !f.generated
            && snap.roots[f.root as usize].kind == crate::config::RootKind::Service
            && snap.roots.get(ie.to_root as usize).map(|r| r.kind)
                == Some(crate::config::RootKind::Library)
        {
            let u = users.entry(ie.to_root).or_default();
            let name = group_of(snap, ie.at.file);
            if !u.contains(&name) {
                u.push(name);
            }
        }
    }
    for u in users.values_mut() {
        crate::order::sort(u);
    }
    users
}

/// Each service's file count and its files per language (documentation and configuration
/// languages left out), by service name.
pub(super) type ServiceSizes = BTreeMap<String, (usize, BTreeMap<&'static str, usize>)>;

/// Services, with their file counts and languages.
pub(super) fn service_sizes(snap: &Snapshot) -> ServiceSizes {
    let mut services: ServiceSizes = BTreeMap::new();
    for (i, f) in snap.files.iter().enumerate() {
        let e = services.entry(group_of(snap, i as u32)).or_default();
        e.0 += 1;
        if !matches!(
            f.lang,
            crate::index::facts::Language::Markdown
                | crate::index::facts::Language::Yaml
                | crate::index::facts::Language::Properties
                | crate::index::facts::Language::MsBuild
        ) {
            *e.1.entry(f.lang.name()).or_default() += 1;
        }
    }
    services
}

/// The service `zoom` names: exactly, else ignoring case, else by its last path segment; an
/// error naming a few close services when none matches (the argument echoed bounded: it is
/// the client's, of any length).
pub(super) fn find_service(services: &ServiceSizes, z: &str) -> Result<String, String> {
    match match_service(services.keys(), z) {
        Some(f) => Ok(f.clone()),
        None => {
            let names: Vec<String> = services.keys().cloned().collect();
            let shown = if names.len() <= 20 {
                names.clone()
            } else {
                crate::resources::close_names(&names, z, 5)
            };
            let shown: Vec<String> = shown.iter().map(|n| inline_code(n)).collect();
            let which = if names.len() <= 20 {
                "The services are"
            } else {
                "The closest of the services are"
            };
            Err(format!(
                "No service named {}. {which}: {}. Call visualize_mesh without `service` to see \
them drawn.",
                inline_code(&crate::protocol::echo_input(z.trim())),
                shown.join(", ")
            ))
        }
    }
}

/// The name among `names` that `z` stands for (see [`find_service`]).
pub(super) fn match_service<'a>(
    names: impl Iterator<Item = &'a String> + Clone,
    z: &str,
) -> Option<&'a String> {
    let z = z.trim().trim_end_matches('/');
    let z = if z == "." || z.is_empty() {
        WORKSPACE_ROOT
    } else {
        z
    };
    let mut all = names.clone();
    let mut ci = names.clone();
    let mut last = names.clone();
    all.find(|k| k.as_str() == z)
        .or_else(|| ci.find(|k| k.eq_ignore_ascii_case(z)))
        .or_else(|| {
            last.find(|k| {
                k.rsplit('/')
                    .next()
                    .is_some_and(|l| l.eq_ignore_ascii_case(z))
            })
        })
        .or_else(|| {
            // The first word of the last segment, when only one service has it: `Basket` for
            // `src/Basket.API`, `orders` for `services/orders-service`.
            let stem = |k: &String| {
                let l = k.rsplit('/').next().unwrap_or(k);
                l.split(['.', '-', '_']).next().unwrap_or(l).to_string()
            };
            let mut hits = names.filter(|k| stem(k).eq_ignore_ascii_case(z));
            let first = hits.next()?;
            hits.next().is_none().then_some(first)
        })
}

/// The service a `service` argument (or a `mesh://service/` URI) names, if any.
pub fn resolve_service(snap: &Snapshot, z: &str) -> Option<String> {
    let names = service_names(snap);
    match_service(names.iter(), z).cloned()
}

/// Service names, the best connected first (links in and out), then the largest, then by name.
pub(super) fn rank_services<'a>(
    services: &'a ServiceSizes,
    links: &BTreeMap<(String, String, LinkKind), Fold>,
) -> Vec<&'a String> {
    let mut degree: HashMap<&str, u32> = HashMap::new();
    for ((from, to, _), fold) in links {
        *degree.entry(from.as_str()).or_default() += fold.count;
        *degree.entry(to.as_str()).or_default() += fold.count;
    }
    let mut ranked: Vec<&String> = services.keys().collect();
    crate::order::sort_by(&mut ranked, |a, b| {
        let da = degree.get(a.as_str()).copied().unwrap_or(0);
        let db = degree.get(b.as_str()).copied().unwrap_or(0);
        db.cmp(&da)
            .then(services[*b].0.cmp(&services[*a].0))
            .then(a.cmp(b))
    });
    ranked
}

#[cfg(test)]
mod tests {
    use super::match_service;

    #[test]
    fn a_service_is_found_by_the_first_word_of_its_last_segment_when_unique() {
        let names: Vec<String> = [
            "src/Basket.API",
            "src/Ordering.API",
            "src/Ordering.Domain",
            "services/orders-service",
            "(workspace root)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let find = |z: &str| match_service(names.iter(), z).cloned();
        assert_eq!(find("basket").as_deref(), Some("src/Basket.API"));
        assert_eq!(find("Basket.API").as_deref(), Some("src/Basket.API"));
        assert_eq!(find("orders").as_deref(), Some("services/orders-service"));
        // Two services start with `Ordering`: no guess.
        assert_eq!(find("Ordering"), None);
        assert_eq!(
            find("src/Ordering.Domain").as_deref(),
            Some("src/Ordering.Domain")
        );
        assert_eq!(find("widgets"), None);
    }
}
