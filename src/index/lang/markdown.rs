//! Markdown extractor: splits a document into sections for `search_docs`.
//!
//! A section starts at an ATX heading (`#`…`######` then a space or end of line, at most three
//! spaces of indentation) or a setext heading (a paragraph underlined with `===` or `---`), and
//! runs to the line before the next heading. Fenced code blocks (```` ``` ```` / `~~~`) and a
//! leading YAML front-matter block never produce headings. Text before the first heading is a
//! level-1 section titled by the file stem. Headings are not symbols: docs are searched apart.

use crate::index::facts::{DocSection, FileFacts};

/// Extracts the sections of one Markdown file. `path` gives the title of the preamble section
/// (its file stem).
pub fn extract(path: &str, text: &str) -> FileFacts {
    FileFacts {
        sections: sections(path, text),
        ..FileFacts::default()
    }
}

/// A heading found on a line: (title, level, first line, last line of the heading itself).
struct Heading {
    title: String,
    level: u8,
    line: u32,
    last: u32,
}

/// The file name without directories and without its last extension.
fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    }
}

/// Strips up to three spaces of indentation; `None` when the line is indented further
/// (indented code) or starts with a tab.
fn block_start(line: &str) -> Option<&str> {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    if spaces > 3 || line[spaces..].starts_with('\t') {
        None
    } else {
        Some(&line[spaces..])
    }
}

/// `(title, level)` when `line` is an ATX heading.
fn atx_heading(line: &str) -> Option<(String, u8)> {
    let rest = block_start(line)?;
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let after = &rest[hashes..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let mut title = after.trim();
    // A closing sequence of #s counts only when preceded by a space (or is the whole title).
    let stripped = title.trim_end_matches('#');
    if stripped.is_empty() {
        title = "";
    } else if stripped.ends_with(' ') || stripped.ends_with('\t') {
        title = stripped.trim_end();
    }
    Some((title.to_string(), hashes as u8))
}

/// The level of a setext underline (`===` → 1, `---` → 2).
fn setext_underline(line: &str) -> Option<u8> {
    let rest = block_start(line)?.trim_end();
    let first = rest.chars().next()?;
    if (first == '=' || first == '-') && rest.chars().all(|c| c == first) {
        Some(if first == '=' { 1 } else { 2 })
    } else {
        None
    }
}

/// The fence marker (`` ` `` or `~`) and its length when `line` opens or closes a fence.
fn fence(line: &str) -> Option<(char, usize)> {
    let rest = block_start(line)?;
    let c = rest.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let len = rest.len() - rest.trim_start_matches(c).len();
    (len >= 3).then_some((c, len))
}

/// True for lines that cannot be the text of a setext heading (they start another block).
fn starts_other_block(line: &str) -> bool {
    let Some(rest) = block_start(line) else {
        return true;
    };
    let t = rest.trim_end();
    let thematic = t.len() >= 3
        && ['-', '*', '_', '=']
            .iter()
            .any(|&c| t.chars().all(|x| x == c || x == ' '));
    thematic
        || t == "-"
        || [">", "- ", "* ", "+ ", "|", "<"]
            .iter()
            .any(|p| t.starts_with(p))
        || {
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
        }
}

/// The first line of the tool-routing section `mesh-mcp init --write-ide-config` writes into
/// `CLAUDE.md`/`AGENTS.md` (`crate::cli::init::GUIDE_BEGIN` starts with it), and its last.
const OWN_GUIDE_BEGIN: &str = "<!-- mesh-mcp:begin";
const OWN_GUIDE_END: &str = "<!-- mesh-mcp:end -->";

/// Blanks the section `mesh-mcp init` wrote between its markers (line numbers stay): it is
/// this tool's own routing advice, not the team's documentation, and as a doc it would only
/// push the workspace's own sections out of `search_docs`' answers. A lone marker blanks
/// nothing.
fn blank_own_guide(lines: &mut [&str]) {
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with(OWN_GUIDE_BEGIN)
            && let Some(end) = lines[i..].iter().position(|l| l.trim() == OWN_GUIDE_END)
        {
            for l in &mut lines[i..=i + end] {
                *l = "";
            }
            i += end + 1;
        } else {
            i += 1;
        }
    }
}

/// Splits `text` into sections (see the module doc). Line numbers are 1-based; `end_line` is
/// the last non-blank line before the next heading (at least the heading's own last line).
pub fn sections(path: &str, text: &str) -> Vec<DocSection> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut lines = lines;
    blank_own_guide(&mut lines);
    let mut headings: Vec<Heading> = Vec::new();
    let mut open_fence: Option<(char, usize)> = None;
    // Start index of the current paragraph (candidate setext heading text).
    let mut para: Option<usize> = None;
    let mut idx = 0;

    // YAML front matter: `---` on the first line up to the next `---` / `...`.
    if lines.first().is_some_and(|l| l.trim_end() == "---")
        && let Some(end) = lines
            .iter()
            .skip(1)
            .position(|l| matches!(l.trim_end(), "---" | "..."))
    {
        idx = end + 2;
    }

    while idx < lines.len() {
        let line = lines[idx];
        let lno = idx as u32 + 1;
        idx += 1;
        if let Some((c, len)) = open_fence {
            if let Some((c2, len2)) = fence(line)
                && c2 == c
                && len2 >= len
                && block_start(line).is_some_and(|r| r.trim_end().trim_start_matches(c).is_empty())
            {
                open_fence = None;
            }
            continue;
        }
        if line.trim().is_empty() {
            para = None;
            continue;
        }
        if let Some(f) = fence(line) {
            let info = &block_start(line).unwrap_or("")[f.1..];
            // A backtick fence's info string may not contain a backtick.
            if f.0 == '~' || !info.contains('`') {
                open_fence = Some(f);
                para = None;
                continue;
            }
        }
        if let Some((title, level)) = atx_heading(line) {
            headings.push(Heading {
                title,
                level,
                line: lno,
                last: lno,
            });
            para = None;
            continue;
        }
        if let (Some(start), Some(level)) = (para, setext_underline(line)) {
            let title = lines[start..idx - 1]
                .iter()
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join(" ");
            headings.push(Heading {
                title,
                level,
                line: start as u32 + 1,
                last: lno,
            });
            para = None;
            continue;
        }
        if para.is_none() && !starts_other_block(line) {
            para = Some(idx - 1);
        } else if para.is_some() && starts_other_block(line) {
            para = None;
        }
    }

    let last_nonblank_before = |end_excl: usize, min: u32| -> u32 {
        let mut e = end_excl;
        while e > 0 && lines[e - 1].trim().is_empty() {
            e -= 1;
        }
        (e as u32).max(min)
    };

    let mut out = Vec::with_capacity(headings.len() + 1);
    let first_heading = headings
        .first()
        .map_or(lines.len(), |h| h.line as usize - 1);
    if let Some(first) = lines[..first_heading]
        .iter()
        .position(|l| !l.trim().is_empty())
    {
        out.push(DocSection {
            title: file_stem(path).to_string(),
            level: 1,
            line: first as u32 + 1,
            end_line: last_nonblank_before(first_heading, first as u32 + 1),
            text: String::new(),
        });
    }
    for (k, h) in headings.iter().enumerate() {
        let next = headings
            .get(k + 1)
            .map_or(lines.len(), |n| n.line as usize - 1);
        out.push(DocSection {
            title: h.title.clone(),
            level: h.level,
            line: h.line,
            end_line: last_nonblank_before(next, h.last),
            text: String::new(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(path: &str, text: &str) -> Vec<(String, u8, u32, u32)> {
        extract(path, text)
            .sections
            .into_iter()
            .map(|s| (s.title, s.level, s.line, s.end_line))
            .collect()
    }

    fn s(t: &str, l: u8, a: u32, b: u32) -> (String, u8, u32, u32) {
        (t.to_string(), l, a, b)
    }

    #[test]
    fn atx_sections_and_preamble() {
        let doc = "Intro text.\n\n# Title #\nbody\n\n\n## Sub ##\n```\n# not a heading\n```\n\n#nospace\n### Third\n####### seven\n#\n";
        assert_eq!(
            summary("docs/adr/0001-outbox.md", doc),
            vec![
                s("0001-outbox", 1, 1, 1),
                s("Title", 1, 3, 4),
                s("Sub", 2, 7, 12),
                s("Third", 3, 13, 14),
                s("", 1, 15, 15),
            ]
        );
    }

    #[test]
    fn the_routing_section_init_writes_is_no_doc() {
        // A guide of the team's with the section `mesh-mcp init --write-ide-config` adds: only
        // the team's text is a doc, at its own lines.
        let guide = format!(
            "# Rules\nBe nice.\n\n{}\n{}{}\n## After\ntext\n",
            crate::cli::init::GUIDE_BEGIN,
            "## Workspace map (mesh-mcp)\n\n- where is X declared\n",
            crate::cli::init::GUIDE_END
        );
        assert_eq!(
            summary("AGENTS.md", &guide),
            vec![s("Rules", 1, 1, 2), s("After", 2, 9, 10)]
        );
        // A file that is only that section has no doc section at all.
        let only = format!(
            "{}\n## Workspace map (mesh-mcp)\n{}\n",
            crate::cli::init::GUIDE_BEGIN,
            crate::cli::init::GUIDE_END
        );
        assert!(summary("CLAUDE.md", &only).is_empty());
        // A lone begin marker is the user's text: kept.
        let lone = format!("{}\n## Kept\n", crate::cli::init::GUIDE_BEGIN);
        assert_eq!(summary("AGENTS.md", &lone).len(), 2);
    }

    #[test]
    fn no_preamble_when_blank_and_closing_hashes() {
        assert_eq!(
            summary("README.md", "\n\n# A # B #\n  ### C#\n"),
            vec![s("A # B", 1, 3, 3), s("C#", 3, 4, 4)]
        );
        assert_eq!(summary("x.md", "   \n"), vec![]);
        assert_eq!(summary("x.md", "just text"), vec![s("x", 1, 1, 1)]);
    }

    #[test]
    fn fences_tilde_and_unclosed() {
        let doc = "# A\n~~~~ yaml\n# no\n~~~\n# still no\n~~~~\n# B\n````\n# never closed\n";
        assert_eq!(summary("a.md", doc), vec![s("A", 1, 1, 6), s("B", 1, 7, 9)]);
        // Indented four spaces: code, not a heading.
        assert_eq!(summary("a.md", "    # code\n"), vec![s("a", 1, 1, 1)]);
    }

    #[test]
    fn setext_headings() {
        let doc = "Big Title\n=========\ntext\n\nSmall\nheading\n---\nmore\n\n---\n- item\n---\n| a | b |\n|---|---|\n";
        assert_eq!(
            summary("a.md", doc),
            vec![s("Big Title", 1, 1, 3), s("Small heading", 2, 5, 14)]
        );
    }

    #[test]
    fn front_matter_and_crlf() {
        let doc = "---\ntitle: x\n---\n# H\r\nbody\r\n";
        assert_eq!(summary("a.md", doc), vec![s("a", 1, 1, 3), s("H", 1, 4, 5)]);
    }

    #[test]
    fn hostile_input() {
        let long = "#".repeat(1 << 20);
        let _ = extract("a.md", &long);
        let many = "# h\n".repeat(10_000);
        assert_eq!(extract("a.md", &many).sections.len(), 10_000);
        let _ = extract("a.md", "\u{0}\u{1}é\n===\n```\u{fffd}");
        let _ = extract("", "");
    }
}
