//! `search_docs`: the team's Markdown docs (ADRs, RFCs, READMEs) ranked for a query, whole
//! sections returned with `path:start-end`.
//!
//! Scoring: title phrase +60 (+30 more when the title is the query), body phrase +20, per word
//! title +15 and body +5, after stop words and aliases; ties break by path and line, so the
//! order is deterministic. Section text was neutralised against prompt injection when it was
//! indexed, so what an agent reads here cannot smuggle instructions in.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::render::{code_block, inline_code};

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "search_docs",
    title: "Search the docs",
    description: "Searches the workspace's Markdown documentation (ADRs, RFCs, READMEs, \
architecture notes) and returns the best-matching whole sections with path:start-end. Use it \
for 'what did the team decide about X' or 'how is Y supposed to work'; for code use \
smart_search. Example: {\"query\": \"transactional outbox\", \"max_sections\": 3}.",
    input_schema: || {
        object_schema(
            json!({
                "query": {"type": "string", "description": "Words or a phrase, e.g. \"transactional outbox\" or \"retry policy\"."},
                "max_sections": super::int_schema("Sections to return, e.g. 5.", 3, 1, 20)
            }),
            &["query"],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: false,
        extra: "{}",
        row: r#"{"endLine":{"type":"integer"}}"#,
    }),
    run,
    truncation_hint: |_| {
        "Ask for fewer sections (max_sections) or a more specific phrase.".to_string()
    },
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    query: String,
    max_sections: Option<i64>,
}

/// English words too common to rank on, always dropped from a query (the configuration's
/// `[docs] stop_words` adds more).
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "in",
    "is", "it", "of", "on", "or", "our", "should", "that", "the", "this", "to", "we", "what",
    "when", "where", "which", "who", "why", "with",
];

/// The most bytes of section text shown per section (the cap of the whole answer is 48 KiB).
const SECTION_BUDGET: usize = 12 * 1024;

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    if let Err(e) =
        super::smart_search::whole_number_args("search_docs", args, &[("max_sections", 3, 1, 20)])
    {
        return e;
    }
    let (args, snap): (Args, _) = match super::decode_indexed("search_docs", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if let Err(e) = super::smart_search::check_text_len("search_docs", "query", Some(&args.query)) {
        return e;
    }
    let max = match super::in_range("search_docs", "max_sections", args.max_sections, 3, 1, 20) {
        Ok(m) => m,
        Err(e) => return e,
    };
    let docs = &env.shared.config.docs;
    let words = query_words(&args.query, docs);
    let mut out = format!(
        "## Documentation sections for {}\n\n",
        inline_code(args.query.trim())
    );
    if words.is_empty() {
        out.push_str("The query has no searchable words once stop words are removed. Pass a concept, e.g. {\"query\": \"retry policy\"}.\n");
        return ToolOutput::error(out);
    }
    let phrase = words.join(" ");
    let dirs = query_dirs(&words);
    let mut scored: Vec<(u32, String, u32, &crate::index::facts::DocSection)> = Vec::new();
    let mut sections_seen = 0usize;
    let mut doc_files = 0usize;
    for f in &snap.files {
        let sections = &f.facts().sections;
        if sections.is_empty() {
            continue;
        }
        let path = snap.display_path(f);
        if !docs.paths.is_empty() && !docs.paths.iter().any(|g| doc_glob(g, &path)) {
            continue;
        }
        doc_files += 1;
        let under = !dirs.is_empty() && {
            let lower_path = path.to_lowercase();
            dirs.iter().any(|d| lower_path.starts_with(d.as_str()))
        };
        for s in sections {
            sections_seen += 1;
            let score = section_score(s, &phrase, &words, under);
            if score > 0 {
                scored.push((score, path.clone(), s.line, s));
            }
        }
    }
    if !docs.enabled {
        out.push_str(
            "Docs indexing is switched off in the configuration (`[docs] enabled = false`).\n",
        );
        return ToolOutput::ok(out).with_data(super::structured::empty());
    }
    if scored.is_empty() {
        out.push_str(&format!(
            "No section matches (searched {sections_seen} sections in {doc_files} Markdown files, index generation {}).\n",
            snap.generation
        ));
        return ToolOutput::ok(out).with_data(super::structured::empty());
    }
    crate::order::sort_by(&mut scored, |a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    let total = scored.len();
    out.push_str(&format!(
        "_Showing {} of {total} matching sections (of {sections_seen} in {doc_files} files)._\n\n",
        total.min(max)
    ));
    let mut files = Vec::new();
    let mut rows = Vec::new();
    for (i, (score, path, _, s)) in scored.iter().take(max).enumerate() {
        out.push_str(&format!(
            "### [{}] {} — {}\n_Level {}, score {score}._\n\n",
            i + 1,
            inline_code(&s.title),
            crate::render::code_loc(path, format!("{}-{}", s.line, s.end_line)),
            s.level
        ));
        let text = shortened(&s.text);
        let cut = text.len() < s.text.len();
        out.push_str(&code_block("markdown", text));
        if cut {
            out.push_str(&format!(
                "_Section shortened; read {} from line {} for the rest._\n",
                inline_code(path),
                s.line
            ));
        }
        out.push('\n');
        let mut row = super::structured::row(path, s.line, "section", &s.title, "", text);
        row["endLine"] = json!(s.end_line);
        rows.push(row);
        files.push(path.clone());
    }
    // No `offset` argument: more sections come with a larger `max_sections`.
    let data = super::structured::page(total, 0, None, rows);
    let mut result = ToolOutput::ok(out).with_data(data);
    files.dedup();
    result.files_accessed = files;
    result
}

/// The query's searchable words, lowercased: stop words (built in and configured) dropped,
/// configured aliases applied.
fn query_words(query: &str, docs: &crate::config::DocsConfig) -> Vec<String> {
    query
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
                .to_lowercase()
        })
        .filter(|w| {
            !w.is_empty()
                && !STOP_WORDS.contains(&w.as_str())
                && !docs.stop_words.iter().any(|s| s.eq_ignore_ascii_case(w))
        })
        .map(|w| docs.aliases.get(&w).map(|a| a.to_lowercase()).unwrap_or(w))
        .collect()
}

/// A word that is a directory (`services/orders`, as the onboard_service prompt passes a
/// service) also matches the docs under it: a service's own README is about it even when its
/// text never spells the path. The directories, each ending in `/`.
fn query_dirs(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter(|w| w.contains('/'))
        .map(|w| format!("{}/", w.trim_start_matches("./").trim_matches('/')))
        .filter(|d| d.len() > 1)
        .collect()
}

/// How well a section matches: the whole phrase in the title counts most (a title that is the
/// phrase most of all), then in the body, then each word; a section of a doc under a directory
/// the query names counts as well (a top-level one more). 0: no match.
fn section_score(
    s: &crate::index::facts::DocSection,
    phrase: &str,
    words: &[String],
    under: bool,
) -> u32 {
    let title = s.title.to_lowercase();
    let body = s.text.to_lowercase();
    let mut score = 0;
    if at_word_start(&title, phrase) {
        score += 60;
        // A title that is the query, word for word, is the section asked for.
        if title.trim() == phrase.trim() {
            score += 30;
        }
    }
    if at_word_start(&body, phrase) {
        score += 20;
    }
    for w in words {
        if at_word_start(&title, w) {
            score += 15;
        }
        if at_word_start(&body, w) {
            score += 5;
        }
    }
    if under {
        score += if s.level == 1 { 60 } else { 40 };
    }
    score
}

/// True when `needle` occurs in `hay` at the start of a word: "event" finds "events" and
/// "event-bus", but "bus" does not find "robustly".
fn at_word_start(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    hay.match_indices(needle).any(|(i, _)| {
        !hay[..i]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    })
}

/// A section's text cut to [`SECTION_BUDGET`] at a line end (the whole text when it fits).
fn shortened(text: &str) -> &str {
    if text.len() <= SECTION_BUDGET {
        return text;
    }
    let mut end = SECTION_BUDGET;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..text[..end].rfind('\n').unwrap_or(end)]
}

/// A docs-path glob (`docs/**/*.md`, `*.md`, `adr/`) against a workspace path, with
/// gitignore meaning.
fn doc_glob(glob: &str, path: &str) -> bool {
    crate::index::ignore::path_glob(glob, path)
}

#[cfg(test)]
mod tests {
    use super::at_word_start;

    #[test]
    fn words_match_at_word_starts_only() {
        assert!(at_word_start("the event bus", "bus"));
        assert!(at_word_start("events are sent", "event"));
        assert!(at_word_start("an event-bus", "bus"));
        assert!(at_word_start("café bus", "bus"));
        assert!(!at_word_start("grow robustly", "bus"));
        assert!(!at_word_start("überbus", "bus"));
        assert!(!at_word_start("anything", ""));
    }
}
