//! In-app navigation ([`HttpFact::Navigate`]): a web UI's links and navigation calls to its own
//! pages (`<a href="user/orders">`, `NavigationManager.NavigateTo($"item/{id}")`) are callers of
//! the `GET` route of the same root that serves them (a Blazor `@page`, a controller action),
//! like a health check: a change of the route breaks them, but they link no two services. A
//! link in a shared component library leads to the pages of the apps that reference it.
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
        let roots = self.apps_rendering(join.files[fi].root);
        let matches = self.best_routes(
            join.files,
            fi as u32,
            Some("GET"),
            Some(&roots),
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

impl Graph {
    /// The roots whose pages a link of `root` can lead to: its own, and when `root` is a .NET
    /// library (a Razor class library of shared components) every root whose projects
    /// reference it, since the link is rendered inside those apps.
    fn apps_rendering(&self, root: u16) -> Vec<u16> {
        let mut roots = vec![root];
        roots.extend(
            self.project_refs
                .iter()
                .filter(|(app, refs)| **app != root && refs.contains(&root))
                .map(|(app, _)| *app),
        );
        roots
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
    use crate::index::facts::Language;
    use crate::index::snapshot::Snapshot;

    /// A snapshot of `(root, path in the root, text)` files, each read as its extension says.
    fn snapshot(files: &[(&str, &str, &str)]) -> Snapshot {
        Snapshot::from_facts(
            files
                .iter()
                .map(|(root, path, text)| {
                    let lang = Language::of_path(path).expect("an indexed extension");
                    (*root, *path, crate::index::lang::extract(lang, path, text))
                })
                .collect(),
        )
    }

    /// Each navigation join as (route path, root of the route, caller file, caller line).
    fn joins(snap: &Snapshot) -> Vec<(String, String, String, u32)> {
        let g = &snap.graph;
        g.route_calls
            .iter()
            .map(|c| {
                let route = &g.routes[c.route as usize];
                let root = snap.files[route.at.file as usize].root as usize;
                (
                    route.path.clone(),
                    snap.roots[root].label.clone(),
                    snap.files[c.at.file as usize].path.to_string(),
                    c.at.line,
                )
            })
            .collect()
    }

    #[test]
    fn a_component_library_links_to_the_pages_of_the_apps_that_reference_it() {
        let library_ref = "<ItemGroup>\n  <ProjectReference Include=\"..\\components\\Components.csproj\" />\n</ItemGroup>\n";
        let snap = snapshot(&[
            (
                "components",
                "Components.csproj",
                "<Project Sdk=\"Microsoft.NET.Sdk.Razor\"></Project>\n",
            ),
            (
                "components",
                "Catalog/ListItem.razor",
                "<a href=\"@ItemHelper.Url(Item)\">x</a>\n<a href=\"basket\">none</a>\n",
            ),
            (
                "components",
                "Item/ItemHelper.cs",
                "public static class ItemHelper {\n    public static string Url(CatalogItem item) => $\"item/{item.Id}\";\n}\n",
            ),
            ("web", "Web.csproj", library_ref),
            ("web", "Pages/Item.razor", "@page \"/item/{itemId:int}\"\n"),
            // A web app that does not reference the library.
            ("admin", "Admin.csproj", "<Project></Project>\n"),
            ("admin", "Pages/Item.razor", "@page \"/item/{id:int}\"\n"),
        ]);
        assert_eq!(
            joins(&snap),
            vec![(
                "/item/{itemId:int}".to_string(),
                "web".to_string(),
                "Catalog/ListItem.razor".to_string(),
                1
            )],
            "{:?}",
            snap.graph.route_calls
        );
    }

    #[test]
    fn a_blazor_hybrid_apps_pages_are_not_http_routes() {
        let hybrid_project = "<Project Sdk=\"Microsoft.NET.Sdk.Razor\">\n  <ItemGroup>\n    <PackageReference Include=\"Microsoft.AspNetCore.Components.WebView.Maui\" Version=\"9.0.30\" />\n  </ItemGroup>\n</Project>\n";
        // A package whose name only starts the same is not the web view.
        let web_project = "<Project>\n  <ItemGroup>\n    <PackageReference Include=\"Microsoft.AspNetCore.Components.WebViewer\" />\n  </ItemGroup>\n</Project>\n";
        let snap = snapshot(&[
            ("hybrid", "Hybrid.csproj", hybrid_project),
            ("hybrid", "Pages/Catalog.razor", "@page \"/\"\n"),
            ("hybrid", "Layout/Header.razor", "<a href=\"\">home</a>\n"),
            (
                "hybrid",
                "Nav.cs",
                "class Nav {\n  NavigationManager N;\n  void Go() { N.NavigateTo(\"\"); }\n}\n",
            ),
            ("web", "Web.csproj", web_project),
            ("web", "Pages/Catalog.razor", "@page \"/\"\n"),
            ("web", "Layout/Header.razor", "<a href=\"\">home</a>\n"),
        ]);
        let routes: Vec<(&str, &str)> = snap
            .graph
            .routes
            .iter()
            .map(|r| {
                (
                    r.path.as_str(),
                    snap.files[r.at.file as usize].path.as_ref(),
                )
            })
            .collect();
        assert_eq!(routes, vec![("/", "Pages/Catalog.razor")]);
        // Nor are they endpoints to search: only the web app's page is.
        let endpoints: Vec<String> = snap
            .names
            .iter()
            .flat_map(|table| table.matches("get /", ""))
            .filter(|hit| hit.kind == crate::index::facts::SymbolKind::Endpoint)
            .map(|hit| snap.display_path(&snap.files[hit.at.file as usize]))
            .collect();
        assert_eq!(endpoints, vec!["web/Pages/Catalog.razor".to_string()]);
        assert_eq!(
            joins(&snap),
            vec![(
                "/".to_string(),
                "web".to_string(),
                "Layout/Header.razor".to_string(),
                1
            )]
        );
        assert!(
            snap.graph.unresolved_calls.is_empty(),
            "{:?}",
            snap.graph.unresolved_calls
        );
    }

    #[test]
    fn links_call_the_pages_of_their_own_app_and_link_no_services() {
        let snap = snapshot(&[
            (
                "web",
                "Pages/Catalog.razor",
                "@page \"/\"\n<h1>Catalog</h1>\n",
            ),
            (
                "web",
                "Pages/Orders.razor",
                "@page \"/user/orders\"\n<a href=\"user/orders\">self</a>\n",
            ),
            ("web", "Pages/Item.razor", "@page \"/item/{itemId:int}\"\n"),
            (
                "web",
                "Pages/User/LogIn.razor",
                "@page \"/user/login\"\n@code {\n    public static string Url(NavigationManager nav)\n        => $\"user/login?returnUrl={nav.Uri}\";\n}\n",
            ),
            (
                "web",
                "Layout/UserMenu.razor",
                "<a href=\"user/orders\">My orders</a>\n<a href=\"\">home</a>\n<a href=\"https://example.com/user/orders\">x</a>\n<a href=\"user/settings\">none</a>\n<a href=\"@Pages.User.LogIn.Url(Nav)\">in</a>\n",
            ),
            (
                "web",
                "Checkout.cs",
                "class Checkout {\n  NavigationManager Nav;\n  void Done(int id) {\n    Nav.NavigateTo($\"item/{id}?tab=1\");\n  }\n}\n",
            ),
            // Another app serving the same pages, and an API serving the same path.
            (
                "hybrid",
                "Pages/Item.razor",
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
                    "Checkout.cs",
                    4,
                    "/item/{}?tab=1",
                    true,
                    true
                ),
                (
                    "/user/orders",
                    "Layout/UserMenu.razor",
                    1,
                    "/user/orders",
                    true,
                    true
                ),
                ("/", "Layout/UserMenu.razor", 2, "/", true, true),
                // Through what `LogIn.Url` returns.
                (
                    "/user/login",
                    "Layout/UserMenu.razor",
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
