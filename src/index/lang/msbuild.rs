//! .NET project files (`.csproj`, `.fsproj`, `.vbproj`): the references between projects.
//!
//! A .NET service depends on its libraries through `<ProjectReference Include="..\Lib\Lib.csproj" />`,
//! not through anything in its sources: a C# namespace is not path-shaped and may be declared
//! by several projects (and by the framework). Each `ProjectReference` becomes an [`Import`]
//! whose module is the referenced path with `/` (relative to the project file, as written),
//! and each `PackageReference` one whose module is the package name (the graph links it only
//! when it names a workspace project). The file's package is the project's assembly name
//! (`<AssemblyName>`, else the file stem). A reference under a `Condition` is still listed:
//! the index does not evaluate MSBuild conditions, and a conditional reference is a dependency
//! in some build. Comments are skipped; a reference spelled with an MSBuild property or a
//! wildcard (`$(Root)src/X.csproj`, `*.csproj`) cannot be resolved statically and is left out.

use crate::index::facts::{FileFacts, Import};

/// True when an import module of a project file names another project file (a
/// `ProjectReference`), not a package.
pub fn is_project_path(module: &str) -> bool {
    let lower = module.to_ascii_lowercase();
    [".csproj", ".fsproj", ".vbproj"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// The workspace path, lowercased (Windows builds ignore case), that a `ProjectReference`
/// module of the project file at workspace path `project` names; `None` for a package or a
/// path climbing out of the workspace.
pub fn referenced_path(project: &str, module: &str) -> Option<String> {
    if !is_project_path(module) {
        return None;
    }
    let dir = project.rsplit_once('/').map_or("", |(d, _)| d);
    crate::index::modules::join_lexically(dir, module).map(|p| p.to_lowercase())
}

/// The facts of one project file.
pub fn extract(path: &str, text: &str) -> FileFacts {
    let code = without_comments(text);
    let mut imports = Vec::new();
    let mut assembly = None;
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(off) = code[i..].find('<') {
        let start = i + off + 1;
        let name_end = start
            + code[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
                .unwrap_or(code.len() - start);
        let name = &code[start..name_end];
        let tag_end = tag_end(bytes, name_end);
        i = tag_end.max(start);
        let reference = if name.eq_ignore_ascii_case("ProjectReference") {
            true
        } else if name.eq_ignore_ascii_case("PackageReference") {
            false
        } else {
            if name.eq_ignore_ascii_case("AssemblyName") && assembly.is_none() {
                let body_end = code[i..].find('<').map_or(code.len(), |e| i + e);
                let value = code[i..body_end].trim_start_matches('>').trim();
                if !value.is_empty() && !value.contains("$(") {
                    assembly = Some(value.to_string());
                }
            }
            continue;
        };
        let Some((value, at)) = attribute(&code[name_end..tag_end], "Include") else {
            continue;
        };
        let line = 1 + code[..name_end + at]
            .bytes()
            .filter(|&b| b == b'\n')
            .count() as u32;
        for item in value.split(';').map(str::trim) {
            if item.is_empty() || item.contains("$(") || item.contains('*') || item.contains("@(") {
                continue;
            }
            let module = if reference {
                item.replace('\\', "/")
            } else {
                item.to_string()
            };
            imports.push(Import::whole_module(module, None, line));
        }
    }
    let stem = path.rsplit('/').next().unwrap_or(path);
    let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
    FileFacts {
        package: Some(assembly.unwrap_or_else(|| stem.to_string())),
        imports,
        ..FileFacts::default()
    }
}

/// The text with every `<!-- … -->` comment blanked (line breaks kept, so lines and byte
/// offsets stay); an unterminated comment runs to the end.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        out.push_str(&rest[..open]);
        let body = &rest[open..];
        let close = body.find("-->").map_or(body.len(), |c| c + 3);
        out.extend(
            body[..close]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        // Multi-byte characters become one space each: pad to keep byte offsets.
        let blanked: usize = body[..close].chars().map(|c| c.len_utf8() - 1).sum();
        out.extend(std::iter::repeat_n(' ', blanked));
        rest = &body[close..];
    }
    out.push_str(rest);
    out
}

/// The offset just past the `>` that closes the tag whose attributes start at `from`
/// (quoted values may hold `>`), or the end of the text.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut quote = None;
    for (k, &b) in bytes.iter().enumerate().skip(from) {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return k + 1,
            (None, b'<') => return k,
            _ => {}
        }
    }
    bytes.len()
}

/// The value of attribute `name` (case-insensitive) in a tag's attribute text, with the offset
/// of the attribute's name: `Include = 'x'` and `Include="x"` alike.
fn attribute<'a>(attrs: &'a str, name: &str) -> Option<(&'a str, usize)> {
    let b = attrs.as_bytes();
    let mut k = 0;
    while k < b.len() {
        if b[k] == b'"' || b[k] == b'\'' {
            // Skip a value that is not ours.
            let q = b[k];
            k += 1
                + attrs[k + 1..]
                    .find(q as char)
                    .unwrap_or(attrs.len() - k - 1)
                + 1;
            continue;
        }
        let word_start = k;
        while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_' || b[k] == b':') {
            k += 1;
        }
        if k == word_start {
            k += 1;
            continue;
        }
        let word = &attrs[word_start..k];
        let mut v = k;
        while v < b.len() && b[v].is_ascii_whitespace() {
            v += 1;
        }
        if v >= b.len() || b[v] != b'=' {
            continue;
        }
        v += 1;
        while v < b.len() && b[v].is_ascii_whitespace() {
            v += 1;
        }
        let Some(&q) = b.get(v).filter(|q| matches!(q, b'"' | b'\'')) else {
            continue;
        };
        let body = v + 1;
        let end = attrs[body..]
            .find(q as char)
            .map_or(attrs.len(), |e| body + e);
        if word.eq_ignore_ascii_case(name) {
            return Some((&attrs[body..end], word_start));
        }
        k = (end + 1).min(b.len());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<(String, u32)> {
        extract("src/App/App.csproj", text)
            .imports
            .into_iter()
            .map(|i| (i.module, i.line))
            .collect()
    }

    #[test]
    fn project_and_package_references_with_their_lines() {
        let text = r#"<Project Sdk="Microsoft.NET.Sdk">
  <ItemGroup>
    <ProjectReference Include="..\EventBus\EventBus.csproj" />
    <ProjectReference   Include = '../Shared/Shared.fsproj'/>
    <PackageReference Include="Polly" Version="8.0" />
    <ProjectReference
        Condition="'$(Configuration)' == 'Debug'"
        Include="..\Debug\Tools.vbproj" />
  </ItemGroup>
</Project>"#;
        assert_eq!(
            refs(text),
            vec![
                ("../EventBus/EventBus.csproj".to_string(), 3),
                ("../Shared/Shared.fsproj".to_string(), 4),
                ("Polly".to_string(), 5),
                ("../Debug/Tools.vbproj".to_string(), 8),
            ]
        );
        assert!(is_project_path("../Debug/Tools.VBPROJ"));
        assert!(!is_project_path("Polly"));
    }

    #[test]
    fn comments_properties_and_other_elements_are_no_references() {
        let text = "<Project>\n  <!-- <ProjectReference Include=\"..\\Old\\Old.csproj\" /> -->\n  \
<!--\n <ProjectReference Include=\"../Gone/Gone.csproj\" />\n-->\n  \
<ProjectReferenceX Include=\"../No/No.csproj\" />\n  \
<ProjectReference Include=\"$(RepoRoot)src/X/X.csproj\" />\n  \
<ProjectReference Include=\"../*/*.csproj\" />\n  \
<ProjectReference Update=\"../U/U.csproj\" />\n  \
<Compile Include=\"..\\Linked\\File.cs\" />\n  \
<ProjectReference Include=\"../A/A.csproj;../B/B.csproj\" />\n</Project>";
        assert_eq!(
            refs(text),
            vec![
                ("../A/A.csproj".to_string(), 11),
                ("../B/B.csproj".to_string(), 11)
            ]
        );
    }

    #[test]
    fn the_package_is_the_assembly_name_else_the_stem() {
        let plain = extract("src/Orders.Api/Orders.Api.csproj", "<Project/>");
        assert_eq!(plain.package.as_deref(), Some("Orders.Api"));
        let named = extract(
            "x/Lib.csproj",
            "<Project><PropertyGroup><AssemblyName> Acme.Lib </AssemblyName></PropertyGroup></Project>",
        );
        assert_eq!(named.package.as_deref(), Some("Acme.Lib"));
        // A multi-byte character in a comment keeps the lines of what follows.
        let text = "<!-- café ☕ -->\n<ProjectReference Include=\"a/A.csproj\"/>";
        assert_eq!(refs(text), vec![("a/A.csproj".to_string(), 2)]);
        // Unterminated tag, comment and attribute: no panic, nothing listed.
        let _ = refs("<ProjectReference Include=\"x");
        assert!(refs("<!-- <ProjectReference Include=\"a/A.csproj\"/>").is_empty());
        assert!(refs("<ProjectReference Include=").is_empty());
    }
}
