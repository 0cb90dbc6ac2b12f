//! `mesh-mcp init [--write-ide-config] [--force]`: writes `.agents/mesh-mcp.toml` from the
//! detected layout and, on request, registers the server with the IDEs and tells the agents
//! which tool answers which question.
//!
//! Every edit of a file the user owns is surgical: a JSON config gains or updates only the
//! `mesh-mcp` entry (the rest of the file, its other servers, keys, order and formatting stay
//! byte for byte), a Markdown guide gets only the section between our begin/end markers, and a
//! second run changes nothing. A file that is not what we expect (a JSON file that is not an
//! object, a guide with only one marker) is left alone with a warning.

use std::path::Path;

use serde_json::{Value, json};

const USAGE: &str = "\
Usage: mesh-mcp init [--write-ide-config] [--force]

Writes .agents/mesh-mcp.toml for the workspace in the current directory from its detected
layout (an existing file is kept unless --force). With --write-ide-config, also registers the
server in .mcp.json (Claude Code), .cursor/mcp.json and .vscode/mcp.json, and writes a short
tool-routing section into CLAUDE.md and AGENTS.md. Re-running changes nothing.

Example: mesh-mcp init --write-ide-config
";

/// The begin marker of our section in `CLAUDE.md`/`AGENTS.md`.
pub const GUIDE_BEGIN: &str =
    "<!-- mesh-mcp:begin (written by `mesh-mcp init`; edits inside are replaced) -->";
/// The end marker of our section.
pub const GUIDE_END: &str = "<!-- mesh-mcp:end -->";

/// The routing section written between the markers.
const GUIDE_BODY: &str = "\
## Workspace map (mesh-mcp)

This workspace is indexed by the `mesh-mcp` MCP server. Ask it before grepping across services:

- where is X declared → `smart_search`
- who imports or uses X → `find_dependents`
- who implements or calls a gRPC method, and is a `.proto` change wire-compatible → `analyze_grpc`
- what does changing an RPC, topic, event or route affect → `analyze_impact`
- what does this branch's diff touch and break → `analyze_changes`
- what do the team's docs (ADRs, READMEs) say → `search_docs`
- the picture of the services → `visualize_mesh`
- is the index fresh and complete → `index_status`

Every answer cites `path:line`: treat it as a starting point and open the file to confirm.
Rows marked `heuristic` or `ambiguous` deserve a targeted check.
";

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let mut write_ide = false;
    let mut force = false;
    for a in args {
        match a.as_str() {
            "--help" | "-h" => {
                return super::print_stdout(USAGE);
            }
            "--write-ide-config" => write_ide = true,
            "--force" => force = true,
            other => {
                eprintln!("mesh-mcp init: unknown argument `{other}`. Try `mesh-mcp init --help`.");
                return 2;
            }
        }
    }
    let base = match std::env::current_dir().and_then(|d| d.canonicalize()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mesh-mcp init: cannot read the current directory: {e}");
            return 1;
        }
    };
    let mut status = 0;
    if let Err(e) = write_config(&base, force) {
        eprintln!("mesh-mcp init: {e}");
        status = 1;
    }
    if write_ide {
        let (command, on_path) = server_command();
        if on_path {
            eprintln!(
                "Registering the server as `mesh-mcp` (found on PATH), so the files work on every machine that has it."
            );
        } else {
            eprintln!(
                "Registering the server by its absolute path {command}: `mesh-mcp` is not on PATH. These files are often committed; put mesh-mcp (and meshd) on PATH and re-run to write the command name instead."
            );
        }
        for (rel, kind) in IDE_FILES {
            if let Err(e) = stays_inside(&base, rel) {
                eprintln!("  ⚠ {rel}: {e}");
                status = 1;
                continue;
            }
            match merge_ide_file(&base.join(rel), *kind, &command) {
                Ok(Change::Unchanged) => eprintln!("  = {rel}: already registers mesh-mcp"),
                Ok(Change::Written) => eprintln!("  ✔ {rel}: mesh-mcp registered"),
                Err(e) => {
                    eprintln!("  ⚠ {rel}: {e}");
                }
            }
        }
        for rel in ["CLAUDE.md", "AGENTS.md"] {
            if let Err(e) = stays_inside(&base, rel) {
                eprintln!("  ⚠ {rel}: {e}");
                status = 1;
                continue;
            }
            match upsert_guide(&base.join(rel)) {
                Ok(Change::Unchanged) => eprintln!("  = {rel}: routing section up to date"),
                Ok(Change::Written) => eprintln!("  ✔ {rel}: routing section written"),
                Err(e) => eprintln!("  ⚠ {rel}: {e}"),
            }
        }
    }
    // The command as the reader can type it: the name when it is on PATH, else this binary.
    eprintln!(
        "Next: `{} doctor` checks the setup; restart your agent so it picks up the server.",
        server_command().0
    );
    status
}

/// Whether a file was rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Unchanged,
    Written,
}

/// The server entry's shape per IDE file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdeKind {
    /// `{"mcpServers": {"mesh-mcp": {"command", "args"}}}` (Claude Code, Cursor).
    McpServers,
    /// `{"servers": {"mesh-mcp": {"type": "stdio", "command", "args"}}}` (VS Code).
    VsCode,
}

const IDE_FILES: &[(&str, IdeKind)] = &[
    (".mcp.json", IdeKind::McpServers),
    (".cursor/mcp.json", IdeKind::McpServers),
    (".vscode/mcp.json", IdeKind::VsCode),
];

/// `mesh-mcp` when it is on `PATH` (true), else this executable's absolute path (false).
pub(crate) fn server_command() -> (String, bool) {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("mesh-mcp").is_file()));
    if on_path {
        return ("mesh-mcp".into(), true);
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_string));
    match exe {
        Some(p) => (p, false),
        None => ("mesh-mcp".into(), true),
    }
}

/// Detects the layout and writes `.agents/mesh-mcp.toml` (kept when it exists, unless `force`).
fn write_config(base: &Path, force: bool) -> Result<(), String> {
    stays_inside(base, ".agents/mesh-mcp.toml")
        .map_err(|e| format!(".agents/mesh-mcp.toml: {e}"))?;
    let path = base.join(".agents").join("mesh-mcp.toml");
    let (text, found) = config_text(base);
    for line in &found {
        eprintln!("Found: {line}");
    }
    if path.exists() && !force {
        eprintln!(
            "  = {} exists and was kept (pass --force to regenerate it)",
            rel(base, &path)
        );
        return Ok(());
    }
    std::fs::create_dir_all(path.parent().unwrap_or(base))
        .map_err(|e| format!("cannot create .agents/: {e}"))?;
    std::fs::write(&path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    // The file must load: a template we cannot read back is a bug, not a user mistake.
    crate::config::discover(base, Some(&path))
        .map_err(|e| format!("the written config does not load ({e}); please report this"))?;
    eprintln!("  ✔ wrote {}", rel(base, &path));
    Ok(())
}

/// Checks that writing `rel` (a `/`-separated path under the canonical workspace `base`)
/// cannot land outside the workspace: no existing component of it (the file, or a directory
/// such as `.vscode/`) may be a symlink that resolves outside `base` or nowhere (writing
/// through a dangling link creates its target, wherever that is). A link that stays inside
/// is fine. The error says what the link points at and the fix.
fn stays_inside(base: &Path, rel: &str) -> Result<(), String> {
    let mut at = base.to_path_buf();
    for part in rel.split('/') {
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return Ok(()); // nothing there yet: created as a plain file or directory
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let shown = rel_display(base, &at);
        let target = std::fs::read_link(&at)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        match std::fs::canonicalize(&at) {
            Ok(real) if real.starts_with(base) => {}
            Ok(real) => {
                return Err(format!(
                    "{shown} is a symlink to {}, outside the workspace {}; left alone (nothing \
                     is written through it) — replace the link with a regular file or remove \
                     it, and re-run",
                    real.display(),
                    base.display()
                ));
            }
            Err(_) => {
                return Err(format!(
                    "{shown} is a symlink to {target}, which does not exist; left alone \
                     (writing through it would create that file) — remove the link and re-run"
                ));
            }
        }
    }
    Ok(())
}

/// `p` relative to `base` with `/`, for messages.
fn rel_display(base: &Path, p: &Path) -> String {
    p.strip_prefix(base)
        .map(|r| r.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| p.display().to_string())
}

fn rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base)
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

/// The config text for `base`, and one human line per detection.
///
/// The file never makes an answer worse than no file: every setting that equals what the
/// server does without a config (the roots it detects at each start, every Markdown file as a
/// doc, `allow_all`, the audit trail on) is written commented out, so the detected layout keeps
/// following the workspace as services come and go, and a docs directory never narrows doc
/// search to itself. Only a detected setting that differs from the default would be written
/// live; today detection and the defaults agree, so the file is a commented map of what was
/// found, to uncomment and edit.
pub fn config_text(base: &Path) -> (String, Vec<String>) {
    let mut found = Vec::new();
    let detections = crate::config::detect_layout(base);
    let mut roots: Vec<String> = Vec::new();
    for d in &detections {
        found.push(d.reason.clone());
        roots.push(d.root.clone());
    }
    let mut docs = Vec::new();
    for d in ["docs", "doc", "architecture", "adr", "rfcs"] {
        if base.join(d).is_dir() {
            found.push(format!("{d}/ holds documentation"));
            docs.push(format!("{d}/**/*.md"));
        }
    }
    let mut guarded = Vec::new();
    for d in ["proto", "protos", "proto-registry", "contracts"] {
        if base.join(d).is_dir() {
            found.push(format!(
                "{d}/ holds contracts (suggested stop rule, commented out)"
            ));
            guarded.push((
                d,
                "Contract changes go through the API review: stop and ask a person.",
            ));
        }
    }
    for d in [
        "k8s",
        "k8s-infrastructure",
        "deploy",
        "deployments",
        "infra",
    ] {
        if base.join(d).is_dir() {
            found.push(format!(
                "{d}/ holds infrastructure (suggested stop rule, commented out)"
            ));
            guarded.push((
                d,
                "Infrastructure is changed by the platform team: stop and ask a person.",
            ));
        }
    }
    if roots.is_empty() {
        found.push("no service layout: the workspace is one root (.)".into());
    }
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".into());
    let mut t = String::new();
    t.push_str(&format!(
        "# mesh-mcp configuration, written by `mesh-mcp init` {}.\n\
# Paths are relative to the workspace directory (the parent of .agents/).\n\
# A commented-out setting is what mesh-mcp does without it: uncomment a line only to change it.\n\n",
        crate::VERSION
    ));
    t.push_str("[workspace]\n");
    t.push_str(&format!("# name = {}\n", toml_string(&name)));
    // The roots stay detected at every start (the base plus each service directory), so a new
    // service is indexed as its own root without editing this file.
    let mut all_roots = vec![".".to_string()];
    all_roots.extend(roots);
    t.push_str(
        "# Detected at every start; listing roots pins them (a new service is then not a root).\n",
    );
    t.push_str(&format!("# roots = [{}]\n", quoted_list(&all_roots)));
    t.push_str("# Extra gitignore-style patterns to leave out (secrets and build output are always out).\n# exclude = [\"generated/**\"]\n\n");
    t.push_str("[docs]\n# enabled = true\n");
    t.push_str(
        "# Every Markdown file is a doc (service READMEs included); `paths` would narrow that.\n",
    );
    if docs.is_empty() {
        t.push_str("# paths = [\"docs/**/*.md\", \"**/README.md\"]\n");
    } else {
        let mut with_readmes = docs.clone();
        with_readmes.push("**/README.md".into());
        t.push_str(&format!("# paths = [{}]\n", quoted_list(&with_readmes)));
    }
    t.push_str("# aliases = { k8s = \"kubernetes\" }\n# stop_words = [\"the\", \"a\"]\n\n");
    t.push_str("# Custom event patterns for in-house buses, e.g.:\n# [[patterns]]\n# name = \"outbox\"\n# kind = \"producer\"\n# files = \"*.py\"\n# regex = 'outbox\\.publish\\(\"([^\"]+)\"'\n\n");
    t.push_str(
        "[policy]\n# allow_all (the default), audit_warn or enforce_refusal\n# mode = \"allow_all\"\n",
    );
    if guarded.is_empty() {
        t.push_str("# [policy.stop_rules]\n# \"deploy\" = \"Infrastructure is changed by the platform team: stop and ask a person.\"\n");
    } else {
        t.push_str("# [policy.stop_rules]\n");
        for (d, msg) in guarded {
            t.push_str(&format!("# {} = {}\n", toml_string(d), toml_string(msg)));
        }
    }
    t.push_str("\n[audit]\n# enabled = true\n");
    (t, found)
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| toml_string(s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The server entry for one IDE file.
fn entry(kind: IdeKind, command: &str) -> Value {
    match kind {
        IdeKind::McpServers => json!({"command": command, "args": ["run"]}),
        IdeKind::VsCode => json!({"type": "stdio", "command": command, "args": ["run"]}),
    }
}

/// Adds or updates the `mesh-mcp` entry in one IDE file, touching nothing else.
pub fn merge_ide_file(path: &Path, kind: IdeKind, command: &str) -> Result<Change, String> {
    let container = match kind {
        IdeKind::McpServers => "mcpServers",
        IdeKind::VsCode => "servers",
    };
    let want = entry(kind, command);
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read it ({e}); left alone")),
    };
    let new_text = if text.trim().is_empty() {
        let doc = json!({ container: { "mesh-mcp": want } });
        format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        )
    } else {
        let parsed: Value = serde_json::from_str(&text).map_err(|e| {
            format!("not valid JSON ({e}); left alone — fix or remove it and re-run")
        })?;
        let Value::Object(root) = &parsed else {
            return Err("not a JSON object; left alone".into());
        };
        if root.get(container).and_then(|c| c.get("mesh-mcp")) == Some(&want) {
            return Ok(Change::Unchanged);
        }
        if root.get(container).is_some_and(|c| !c.is_object()) {
            return Err(format!("`{container}` is not an object; left alone"));
        }
        upsert_member(&text, container, "mesh-mcp", &want)
            .ok_or_else(|| "could not locate its top-level object; left alone".to_string())?
    };
    if new_text == text {
        return Ok(Change::Unchanged);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, new_text).map_err(|e| format!("cannot write it: {e}"))?;
    Ok(Change::Written)
}

// ---------------------------------------------------------------------------------------------
// Minimal JSON span scanning, so an edit keeps the rest of the user's file byte for byte.
// ---------------------------------------------------------------------------------------------

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end (exclusive) of the JSON string starting at `i` (a `"`).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut k = i + 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            b'"' => return Some(k + 1),
            _ => k += 1,
        }
    }
    None
}

/// The end (exclusive) of the JSON value starting at `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut k = i;
            while k < b.len() {
                match b[k] {
                    b'"' => {
                        k = string_end(b, k)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(k + 1);
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            None
        }
        _ => {
            let mut k = i;
            while k < b.len() && !matches!(b[k], b',' | b'}' | b']') && !b[k].is_ascii_whitespace()
            {
                k += 1;
            }
            Some(k)
        }
    }
}

/// One object member: its key and the byte span of its value.
type Member = (String, usize, usize);

/// The members of the object at `open`, and the offset of its closing brace.
fn members(text: &str, open: usize) -> Option<(Vec<Member>, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = skip_ws(b, open + 1);
    loop {
        match b.get(i)? {
            b'}' => return Some((out, i)),
            b'"' => {
                let kend = string_end(b, i)?;
                let key: String = serde_json::from_str(&text[i..kend]).ok()?;
                i = skip_ws(b, kend);
                if b.get(i) != Some(&b':') {
                    return None;
                }
                let vstart = skip_ws(b, i + 1);
                let vend = value_end(b, vstart)?;
                out.push((key, vstart, vend));
                i = skip_ws(b, vend);
                if b.get(i) == Some(&b',') {
                    i = skip_ws(b, i + 1);
                }
            }
            _ => return None,
        }
    }
}

/// The indentation unit of a file (the leading whitespace of its first indented line).
fn indent_unit(text: &str) -> String {
    text.lines()
        .find_map(|l| {
            let ws: String = l.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
            (!ws.is_empty()).then_some(ws)
        })
        .unwrap_or_else(|| "  ".into())
}

/// Pretty JSON of `value`, re-indented with `unit` and starting at nesting `level`.
fn pretty_at(value: &Value, unit: &str, level: usize) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let pad = unit.repeat(level);
    pretty
        .lines()
        .enumerate()
        .map(|(n, l)| {
            let depth = (l.len() - l.trim_start().len()) / 2;
            let body = l.trim_start();
            if n == 0 {
                body.to_string()
            } else {
                format!("{pad}{}{body}", unit.repeat(depth))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Inserts `"key": value` as the last member of the object at `open` (nesting `level`).
fn insert_member(
    text: &str,
    open: usize,
    level: usize,
    key: &str,
    value: &Value,
) -> Option<String> {
    let (list, close) = members(text, open)?;
    if !text.trim().contains('\n') {
        // A one-line file stays one line.
        let member = format!(
            "{}:{}",
            serde_json::to_string(key).ok()?,
            serde_json::to_string(value).ok()?
        );
        let sep = if list.is_empty() { "" } else { "," };
        return Some(format!("{}{sep}{member}{}", &text[..close], &text[close..]));
    }
    let unit = indent_unit(text);
    let inner = unit.repeat(level + 1);
    let member = format!(
        "{inner}{}: {}",
        serde_json::to_string(key).ok()?,
        pretty_at(value, &unit, level + 1)
    );
    let mut out = String::with_capacity(text.len() + member.len() + 8);
    match list.last() {
        Some((_, _, vend)) => {
            out.push_str(&text[..*vend]);
            out.push_str(",\n");
            out.push_str(&member);
            // Keep whatever followed the last member (newline and closing indentation).
            let tail_ws = &text[*vend..close];
            let tail_ws = tail_ws.trim_start_matches(',');
            if tail_ws.contains('\n') {
                out.push_str(&tail_ws[tail_ws.find('\n').unwrap_or(0)..]);
            } else {
                out.push('\n');
                out.push_str(&unit.repeat(level));
            }
            out.push_str(&text[close..]);
        }
        None => {
            out.push_str(&text[..open + 1]);
            out.push('\n');
            out.push_str(&member);
            out.push('\n');
            out.push_str(&unit.repeat(level));
            out.push_str(&text[close..]);
        }
    }
    Some(out)
}

/// Sets `root[container][key] = value` in `text`, creating `container` when missing.
fn upsert_member(text: &str, container: &str, key: &str, value: &Value) -> Option<String> {
    let b = text.as_bytes();
    let root_open = skip_ws(b, 0);
    if b.get(root_open) != Some(&b'{') {
        return None;
    }
    let (list, _) = members(text, root_open)?;
    let Some((_, cstart, _)) = list.iter().find(|(k, _, _)| k == container) else {
        return insert_member(text, root_open, 0, container, &json!({ key: value }));
    };
    let (inner, _) = members(text, *cstart)?;
    match inner.iter().find(|(k, _, _)| k == key) {
        Some((_, vstart, vend)) => {
            let unit = indent_unit(text);
            let mut out = String::with_capacity(text.len());
            out.push_str(&text[..*vstart]);
            if text.trim().contains('\n') {
                out.push_str(&pretty_at(value, &unit, 2));
            } else {
                out.push_str(&serde_json::to_string(value).ok()?);
            }
            out.push_str(&text[*vend..]);
            Some(out)
        }
        None => insert_member(text, *cstart, 1, key, value),
    }
}

/// Writes or replaces the routing section of a Markdown agent guide, between the markers.
pub fn upsert_guide(path: &Path) -> Result<Change, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read it ({e}); left alone")),
    };
    let section = format!("{GUIDE_BEGIN}\n{GUIDE_BODY}{GUIDE_END}\n");
    let begin = text.find(GUIDE_BEGIN);
    let end = text.find(GUIDE_END);
    let new_text = match (begin, end) {
        (Some(b), Some(e)) if b < e => {
            let after = e + GUIDE_END.len();
            let after = if text[after..].starts_with('\n') {
                after + 1
            } else {
                after
            };
            format!("{}{section}{}", &text[..b], &text[after..])
        }
        (None, None) => {
            if text.is_empty() {
                section
            } else if text.ends_with("\n\n") {
                format!("{text}{section}")
            } else if text.ends_with('\n') {
                format!("{text}\n{section}")
            } else {
                format!("{text}\n\n{section}")
            }
        }
        _ => {
            return Err(format!(
                "has only one of the mesh-mcp markers (`{GUIDE_BEGIN}` / `{GUIDE_END}`); left alone — remove the stray marker and re-run"
            ));
        }
    };
    if new_text == text {
        return Ok(Change::Unchanged);
    }
    std::fs::write(path, new_text).map_err(|e| format!("cannot write it: {e}"))?;
    Ok(Change::Written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn temp(tag: &str) -> PathBuf {
        crate::scratch::fresh_dir(&format!("init-{tag}"))
    }

    #[test]
    fn symlinks_out_of_the_workspace_are_never_written_through() {
        use std::os::unix::fs::symlink;
        let root = temp("symlinks");
        let ws = root.join("ws");
        let outside = root.join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let ws = ws.canonicalize().unwrap();
        std::fs::write(outside.join("notes.md"), "mine\n").unwrap();
        symlink(outside.join("notes.md"), ws.join("CLAUDE.md")).unwrap();
        symlink(&outside, ws.join(".vscode")).unwrap();
        symlink(root.join("nowhere.md"), ws.join("AGENTS.md")).unwrap();
        std::fs::write(ws.join("inside.md"), "x\n").unwrap();
        symlink(ws.join("inside.md"), ws.join("LINKED.md")).unwrap();

        let err = stays_inside(&ws, "CLAUDE.md").unwrap_err();
        assert!(
            err.contains("CLAUDE.md is a symlink to") && err.contains("outside the workspace"),
            "{err}"
        );
        let err = stays_inside(&ws, ".vscode/mcp.json").unwrap_err();
        assert!(err.starts_with(".vscode is a symlink to"), "{err}");
        let err = stays_inside(&ws, "AGENTS.md").unwrap_err();
        assert!(err.contains("does not exist"), "{err}");
        assert_eq!(stays_inside(&ws, "LINKED.md"), Ok(()));
        assert_eq!(stays_inside(&ws, ".cursor/mcp.json"), Ok(()));
        assert_eq!(stays_inside(&ws, ".mcp.json"), Ok(()));
        // The config template goes through the same check.
        symlink(&outside, ws.join(".agents")).unwrap();
        assert!(
            write_config(&ws, false)
                .unwrap_err()
                .contains("outside the workspace")
        );
        assert!(!outside.join("mesh-mcp.toml").exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("notes.md")).unwrap(),
            "mine\n"
        );
        assert!(!root.join("nowhere.md").exists());
    }

    #[test]
    fn merges_keep_other_servers_keys_and_formatting() {
        let d = temp("merge");
        let p = d.join(".mcp.json");
        let original = "{\n    \"mcpServers\": {\n        \"other\": { \"command\": \"x\" }\n    },\n    \"theme\": \"dark\"\n}\n";
        std::fs::write(&p, original).unwrap();
        assert_eq!(
            merge_ide_file(&p, IdeKind::McpServers, "mesh-mcp").unwrap(),
            Change::Written
        );
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("{\n    \"mcpServers\": {\n        \"other\": { \"command\": \"x\" },\n        \"mesh-mcp\": {"), "{text}");
        assert!(
            text.ends_with("    },\n    \"theme\": \"dark\"\n}\n"),
            "{text}"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["mcpServers"]["mesh-mcp"]["args"][0], "run");
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(
            merge_ide_file(&p, IdeKind::McpServers, "mesh-mcp").unwrap(),
            Change::Unchanged
        );
        // A changed command is updated in place.
        merge_ide_file(&p, IdeKind::McpServers, "/opt/mesh-mcp").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["mcpServers"]["mesh-mcp"]["command"], "/opt/mesh-mcp");
        assert_eq!(v["theme"], "dark");
    }

    #[test]
    fn one_line_files_stay_one_line() {
        let d = temp("compact");
        let p = d.join(".mcp.json");
        std::fs::write(&p, "{\"mcpServers\":{\"x\":{\"command\":\"y\"}}}").unwrap();
        merge_ide_file(&p, IdeKind::McpServers, "mesh-mcp").unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"mcpServers\":{\"x\":{\"command\":\"y\"},\"mesh-mcp\":{\"args\":[\"run\"],\"command\":\"mesh-mcp\"}}}"
        );
    }

    #[test]
    fn missing_container_empty_object_new_file_and_non_objects() {
        let d = temp("shapes");
        let p = d.join("a.json");
        std::fs::write(&p, "{\"editor.fontSize\": 12}").unwrap();
        merge_ide_file(&p, IdeKind::VsCode, "mesh-mcp").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["servers"]["mesh-mcp"]["type"], "stdio");
        assert_eq!(v["editor.fontSize"], 12);
        let p = d.join("b.json");
        std::fs::write(&p, "{}").unwrap();
        merge_ide_file(&p, IdeKind::McpServers, "mesh-mcp").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["mcpServers"]["mesh-mcp"]["command"], "mesh-mcp");
        let p = d.join("sub/new.json");
        merge_ide_file(&p, IdeKind::McpServers, "mesh-mcp").unwrap();
        assert!(p.exists());
        for bad in ["[1, 2]", "\"x\"", "{not json", "{\"mcpServers\": []}"] {
            let p = d.join("bad.json");
            std::fs::write(&p, bad).unwrap();
            assert!(
                merge_ide_file(&p, IdeKind::McpServers, "mesh-mcp").is_err(),
                "{bad}"
            );
            assert_eq!(std::fs::read_to_string(&p).unwrap(), bad);
        }
    }

    #[test]
    fn guide_section_is_replaced_in_place_and_half_marked_files_are_left_alone() {
        let d = temp("guide");
        let p = d.join("CLAUDE.md");
        std::fs::write(&p, "# Rules\n\nBe nice.\n").unwrap();
        assert_eq!(upsert_guide(&p).unwrap(), Change::Written);
        assert_eq!(upsert_guide(&p).unwrap(), Change::Unchanged);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("# Rules\n\nBe nice.\n\n<!-- mesh-mcp:begin"));
        // An old section in the middle is replaced; the text after it stays.
        let old = format!("top\n{GUIDE_BEGIN}\nold stuff\n{GUIDE_END}\nbottom\n");
        std::fs::write(&p, &old).unwrap();
        upsert_guide(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("top\n<!-- mesh-mcp:begin"));
        assert!(text.ends_with(&format!("{GUIDE_END}\nbottom\n")));
        assert!(!text.contains("old stuff"));
        let half = format!("top\n{GUIDE_BEGIN}\nno end\n");
        std::fs::write(&p, &half).unwrap();
        assert!(upsert_guide(&p).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), half);
    }

    #[test]
    fn config_template_loads() {
        let d = temp("cfg");
        std::fs::create_dir_all(d.join("services/orders")).unwrap();
        std::fs::write(d.join("services/orders/go.mod"), "module x\n").unwrap();
        std::fs::create_dir_all(d.join("docs")).unwrap();
        std::fs::create_dir_all(d.join("deploy")).unwrap();
        let (text, found) = config_text(&d);
        assert!(
            text.contains("# roots = [\".\", \"services/orders\"]"),
            "{text}"
        );
        // Nothing narrows the defaults: no live roots or doc paths.
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            assert!(
                !line.contains("roots") && !line.contains("paths"),
                "{line} in {text}"
            );
        }
        assert!(
            found.iter().any(|f| f.contains("services/orders")),
            "{found:?}"
        );
        assert!(found.iter().any(|f| f.contains("deploy/")), "{found:?}");
        std::fs::create_dir_all(d.join(".agents")).unwrap();
        std::fs::write(d.join(".agents/mesh-mcp.toml"), &text).unwrap();
        let cfg = crate::config::discover(&d, None).unwrap();
        assert_eq!(cfg.roots.len(), 2);
        // The written file means exactly what no file means.
        let zero = crate::config::zero_config(&d);
        assert_eq!(
            crate::config::Config {
                config_file: None,
                ..cfg
            },
            zero
        );
    }
}
