//! In-app navigation ([`HttpFact::Navigate`]): a web UI's links and navigation calls to its own
//! pages (`<a href="user/orders">`, `NavigationManager.NavigateTo($"item/{id}")`) are callers of
//! the `GET` route of the same root that serves them (a Blazor `@page`, a controller action),
//! like a health check: a change of the route breaks them, but they link no two services.
//!
//! [`HttpFact::Navigate`]: crate::index::facts::HttpFact::Navigate

use super::{Declared, Graph, HttpJoin, segments_match, url_shape};
use crate::index::facts::Value;
use crate::index::resolve::Seg;

impl Graph {
    /// Joins the navigation of file `fi` at `line` to `url` with the pages of its own root that
    /// serve it. A link to another site, to a URL held in a name the index cannot read
    /// (`href="@returnUrl"`), or to a fragment or a scheme (`#top`, `mailto:`) joins nothing.
    pub(super) fn navigation(&mut self, join: &HttpJoin, fi: usize, url: &Value, line: u32) {
        let mut resolved = join.resolver.resolve(fi as u32, url);
        if resolved.segs.is_empty() {
            resolved.segs.push(Seg::Lit(String::new()));
        }
        let Some(Seg::Lit(first)) = resolved.segs.first_mut() else {
            return;
        };
        let Some(path) = app_path(first) else { return };
        *first = path;
        let shape = url_shape(&resolved);
        let Some(segs) = shape.path.filter(|_| shape.host_hints.is_empty()) else {
            return;
        };
        let root = join.files[fi].root;
        let matches = self.best_routes(
            join.files,
            fi as u32,
            Some("GET"),
            Some(root),
            Declared::InCode,
            |r| {
                // The app's base (`href=""`, `NavigateTo("/")`) is the page routed at `/`.
                if segs.is_empty() {
                    join.templates[r].is_empty().then_some(1)
                } else {
                    segments_match(&segs, &join.templates[r])
                }
            },
        );
        self.push_own_service_calls(matches, fi, line, &shape.display, true);
    }
}

/// The leading literal of a navigation target as a path from the app's root: `~/x` (an
/// app-relative URL) and `x` (relative to the app's base) are `/x`; `None` for a link that
/// leaves the app or the page (`https://…`, `//cdn…`, `mailto:`, `#top`, `?page=2`).
fn app_path(lit: &str) -> Option<String> {
    let lit = lit.trim();
    let lit = lit.strip_prefix('~').unwrap_or(lit);
    if lit.starts_with("//") || lit.starts_with(['#', '?']) {
        return None;
    }
    // A scheme (`https:`, `mailto:`, `javascript:`) before any `/`.
    let scheme_end = lit.find(['/', '?', '#']).unwrap_or(lit.len());
    if lit[..scheme_end].contains(':') {
        return None;
    }
    Some(if lit.starts_with('/') {
        lit.to_string()
    } else {
        format!("/{lit}")
    })
}

#[cfg(test)]
mod tests {
    use super::app_path;
    use crate::index::facts::Language::CSharp;
    use crate::index::snapshot::Snapshot;

    fn snapshot(files: &[(&str, &str, &str)]) -> Snapshot {
        Snapshot::from_facts(
            files
                .iter()
                .map(|(root, path, text)| {
                    (
                        *root,
                        *path,
                        crate::index::lang::extract(CSharp, path, text),
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn links_call_the_pages_of_their_own_app_and_link_no_services() {
        let snap = snapshot(&[
            (
                "web",
                "web/Pages/Catalog.razor",
                "@page \"/\"\n<h1>Catalog</h1>\n",
            ),
            (
                "web",
                "web/Pages/Orders.razor",
                "@page \"/user/orders\"\n<a href=\"user/orders\">self</a>\n",
            ),
            (
                "web",
                "web/Pages/Item.razor",
                "@page \"/item/{itemId:int}\"\n",
            ),
            (
                "web",
                "web/Pages/User/LogIn.razor",
                "@page \"/user/login\"\n@code {\n    public static string Url(NavigationManager nav)\n        => $\"user/login?returnUrl={nav.Uri}\";\n}\n",
            ),
            (
                "web",
                "web/Layout/UserMenu.razor",
                "<a href=\"user/orders\">My orders</a>\n<a href=\"\">home</a>\n<a href=\"https://example.com/user/orders\">x</a>\n<a href=\"user/settings\">none</a>\n<a href=\"@Pages.User.LogIn.Url(Nav)\">in</a>\n",
            ),
            (
                "web",
                "web/Checkout.cs",
                "class Checkout {\n  NavigationManager Nav;\n  void Done(int id) {\n    Nav.NavigateTo($\"item/{id}?tab=1\");\n  }\n}\n",
            ),
            // Another app serving the same pages, and an API serving the same path.
            (
                "hybrid",
                "hybrid/Pages/Item.razor",
                "@page \"/item/{itemId:int}\"\n",
            ),
            (
                "api",
                "api/Program.cs",
                "app.MapGet(\"/user/orders\", () => 1);\n",
            ),
        ]);
        let g = &snap.graph;
        let got: Vec<(&str, &str, u32, &str, bool, bool)> = g
            .route_calls
            .iter()
            .map(|c| {
                let route = &g.routes[c.route as usize];
                (
                    route.path.as_str(),
                    snap.files[c.at.file as usize].path.as_ref(),
                    c.at.line,
                    c.path.as_str(),
                    c.probe,
                    c.navigation,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "/item/{itemId:int}",
                    "web/Checkout.cs",
                    4,
                    "/item/{}?tab=1",
                    true,
                    true
                ),
                (
                    "/user/orders",
                    "web/Layout/UserMenu.razor",
                    1,
                    "/user/orders",
                    true,
                    true
                ),
                ("/", "web/Layout/UserMenu.razor", 2, "/", true, true),
                // Through what `LogIn.Url` returns.
                (
                    "/user/login",
                    "web/Layout/UserMenu.razor",
                    5,
                    "/user/login?returnUrl={nav.Uri}",
                    true,
                    true
                ),
            ],
            "{:?}",
            g.route_calls
        );
        assert!(g.unresolved_calls.is_empty(), "{:?}", g.unresolved_calls);
    }

    #[test]
    fn app_paths_of_navigation_targets() {
        assert_eq!(app_path("user/orders").as_deref(), Some("/user/orders"));
        assert_eq!(app_path("/cart").as_deref(), Some("/cart"));
        assert_eq!(app_path("~/grants").as_deref(), Some("/grants"));
        assert_eq!(app_path("").as_deref(), Some("/"));
        assert_eq!(
            app_path("login?returnUrl=").as_deref(),
            Some("/login?returnUrl=")
        );
        for outside in [
            "https://example.com/x",
            "//cdn.example.com/a.js",
            "mailto:a@b.c",
            "javascript:void(0)",
            "#top",
            "?page=2",
        ] {
            assert_eq!(app_path(outside), None, "{outside}");
        }
    }
}
