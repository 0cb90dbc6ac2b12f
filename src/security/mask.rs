//! Secret masking for snippets, docs and configuration values, by key name and by value shape.
//!
//! By name: a value is hidden when the name it is assigned to looks sensitive (`password`,
//! `api_key`, `jwt.secret`, …), in code, configuration and prose (`password is \`…\``, a
//! `KEY=value` line in a README). Only the value is replaced, so the snippet keeps its shape and
//! the agent still learns which setting exists.
//!
//! By shape ([`mask_shapes`]), whatever the name and in every file kind: the password of a URL
//! with credentials (`postgres://user:pw@host`), AWS access key ids (`AKIA…`, `ASIA…`), GitHub
//! tokens (`ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…`), Slack tokens
//! (`xoxb-…` and friends), Stripe live/test keys, Google API keys (`AIza…`), npm and GitLab
//! tokens, JWTs (three base64url parts starting `eyJ`), and the body of PEM private-key blocks.
//! `tools::invoke` runs it over every tool's final text, so no tool can show one.
//! A secret of no known shape under an innocent name is still not detected.

use std::ops::Range;
use std::path::Path;

/// What replaces a masked value; it tells the agent how to proceed without the secret.
pub const REDACTED: &str = "[REDACTED_SECRET: USE_ENV_OR_LOCAL_FALLBACK]";

/// A key containing any of these (lower-cased) is sensitive; the configuration extractors
/// mask by the same words.
pub(crate) const SENSITIVE_PARTS: &[&str] = &[
    "password",
    "secret",
    "token",
    "credential",
    "passphrase",
    "private",
    "jwt",
    "cert",
    "apikey",
    "api_key",
    "api-key",
    "secret_key",
    "access_key",
    "signing_key",
    "auth_token",
];

/// A key that ends like a key (`.key`, `_key`, `-key`, `fooKey`, or is `key`) is sensitive only
/// when it also contains one of these, so `cache.key` or `partition_key` stay visible.
pub(crate) const KEY_QUALIFIERS: &[&str] = &[
    "secret", "priv", "sign", "encrypt", "access", "token", "api", "cert",
];

/// Declaration keywords and modifiers skipped before the key in code.
const CODE_KEYWORDS: &[&str] = &[
    "const",
    "let",
    "var",
    "val",
    "mut",
    "readonly",
    "private",
    "public",
    "protected",
    "internal",
    "fileprivate",
    "static",
    "final",
    "export",
    "pub",
    "pub(crate)",
    "pub(super)",
    "pub(self)",
    "def",
    "declare",
    "abstract",
    "override",
    "lateinit",
    "open",
    "volatile",
    "transient",
    "case",
    "my",
    "our",
    "local",
];

/// Type names that may precede a variable name in C-family declarations (`string token = …`).
const PRIMITIVE_TYPES: &[&str] = &[
    "string", "str", "int", "long", "short", "byte", "char", "bool", "boolean", "double", "float",
    "auto", "dynamic", "object",
];

/// Values that are never secrets: booleans, nulls and YAML's spellings of them.
const PLAIN_WORDS: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "yes",
    "no",
    "on",
    "off",
    "~",
];

/// Where a line comes from, which decides how strict masking is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineContext {
    /// Source code: only quoted literals are masked, since other values are expressions.
    Code,
    /// YAML, `.properties`, `.env`, INI, TOML and the like: any value under a sensitive key.
    Config,
    /// Markdown and plain text: a `key: value` / `KEY=value` line under a sensitive key whose
    /// value is one word or a quoted literal, and `password is \`…\`` phrases.
    Prose,
}

impl LineContext {
    /// Picks the context from a file name: config-like extensions and `.env*` files are
    /// [`LineContext::Config`], everything else is [`LineContext::Code`].
    pub fn for_path(path: &Path) -> LineContext {
        // Compared ASCII-case-insensitively in place: this runs for every snippet an answer
        // shows, and two lower-cased copies per call were most of its cost.
        let name = path.file_name().map(|n| n.to_string_lossy());
        let name = name.as_deref().unwrap_or("").as_bytes();
        let env = b".env";
        if (name.len() >= env.len() && name[..env.len()].eq_ignore_ascii_case(env))
            || (name.len() >= env.len() && name[name.len() - env.len()..].eq_ignore_ascii_case(env))
        {
            return LineContext::Config;
        }
        let ext = path.extension().map(|e| e.to_string_lossy());
        let is_one_of = |list: &[&str]| {
            ext.as_deref()
                .is_some_and(|e| list.iter().any(|x| e.eq_ignore_ascii_case(x)))
        };
        if is_one_of(&[
            "yml",
            "yaml",
            "properties",
            "env",
            "ini",
            "cfg",
            "conf",
            "toml",
            "config",
        ]) {
            LineContext::Config
        } else if is_one_of(&["md", "markdown", "mdx", "txt", "rst", "adoc"]) {
            LineContext::Prose
        } else {
            LineContext::Code
        }
    }
}

/// True when a value stored under `key` must be hidden.
///
/// The key contains a sensitive word (`password`, `token`, `jwt`, …), or ends like a key and
/// names what kind (`signing-key`, `access.key`, `encryptionKey`).
pub fn is_sensitive_key(key: &str) -> bool {
    let key = key.trim().trim_matches(|c| matches!(c, '"' | '\'' | '`'));
    if key.is_empty() {
        return false;
    }
    let lower = key.to_ascii_lowercase();
    if SENSITIVE_PARTS.iter().any(|p| lower.contains(p)) {
        return true;
    }
    let key_like = lower == "key"
        || lower.ends_with(".key")
        || lower.ends_with("_key")
        || lower.ends_with("-key")
        || ends_with_camel_key(key);
    key_like && KEY_QUALIFIERS.iter().any(|q| lower.contains(q))
}

/// `signingKey`, `accessKey`: a lower-case letter or digit followed by `Key` at the end.
fn ends_with_camel_key(key: &str) -> bool {
    key.strip_suffix("Key")
        .and_then(|head| head.chars().last())
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// Masks the value of a `key: value` / `key = value` line when the key is sensitive.
///
/// Returns `Some` only when something was replaced. Indentation, a type annotation and
/// whatever follows a quoted literal (`,`, `;`, a comment) are kept.
pub fn mask_line(line: &str, ctx: LineContext) -> Option<String> {
    mask_line_counted(line, ctx).map(|(masked, _)| masked)
}

/// [`mask_line`] plus the number of values replaced on the line.
fn mask_line_counted(line: &str, ctx: LineContext) -> Option<(String, u32)> {
    let spans = find_secrets(line, ctx);
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(line.len() + spans.len() * REDACTED.len());
    let mut copied = 0;
    for span in &spans {
        out.push_str(&line[copied..span.start]);
        out.push_str(REDACTED);
        copied = span.end;
    }
    out.push_str(&line[copied..]);
    Some((out, u32::try_from(spans.len()).unwrap_or(u32::MAX)))
}

/// Masks every line of `text` by key name, then the whole text by value shape
/// ([`mask_shapes`]), and returns the result with the number of values replaced.
///
/// Line endings (`\n` or `\r\n`) are preserved.
pub fn mask_text(text: &str, ctx: LineContext) -> (String, u32) {
    let (by_name, named) = mask_names(text, ctx);
    let (by_shape, shaped) = mask_shapes(&by_name);
    (by_shape.into_owned(), named.saturating_add(shaped))
}

/// The key-name pass of [`mask_text`].
fn mask_names(text: &str, ctx: LineContext) -> (String, u32) {
    let mut out = String::with_capacity(text.len());
    let mut count = 0u32;
    for piece in text.split_inclusive('\n') {
        let body = piece.trim_end_matches(['\n', '\r']);
        match mask_line_counted(body, ctx) {
            Some((masked, n)) => {
                out.push_str(&masked);
                count = count.saturating_add(n);
            }
            None => out.push_str(body),
        }
        out.push_str(&piece[body.len()..]);
    }
    (out, count)
}

#[cfg(test)]
/// Returns [`REDACTED`] when a configuration value under `key` must be hidden.
///
/// Empty values, booleans and nulls, environment-variable names, `${…}` references without a
/// secret default and values equal to their own key are shown as they are.
pub fn mask_config_value(key: &str, value: &str) -> Option<&'static str> {
    if !is_sensitive_key(key) {
        return None;
    }
    let value = unquote(value.trim());
    if let Some(placeholder) = placeholder_default(value, key) {
        return placeholder.map(|_| REDACTED);
    }
    if is_exempt_value(key, value) {
        return None;
    }
    Some(REDACTED)
}

#[cfg(test)]
/// Strips one layer of matching quotes.
fn unquote(value: &str) -> &str {
    for q in ['"', '\'', '`'] {
        if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

/// The separator between a key and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// `:` (YAML, JSON, TS objects, type annotations follow it in code).
    Colon,
    /// `=`, `:=` or `=>`.
    Assign,
}

/// Orders spans by their start, stably (through the program's one shared sort, src/order.rs:
/// a line has a handful of spans).
fn sort_by_start(spans: &mut [Range<usize>]) {
    crate::order::sort_by_key(spans, |r| r.start);
}

/// The byte spans of every secret value in `line`, in order and not overlapping.
///
/// The line as a whole is read as one assignment; after it (or from the start when it is not
/// one), inline pairs such as `f(password="x")` or `{ user: "a", token: "b" }` are looked for.
fn find_secrets(line: &str, ctx: LineContext) -> Vec<Range<usize>> {
    // Every rule below needs a sensitive key or phrase word on the line: nearly every line of
    // code has none, and one byte scan for them saves the rules' searches (a sixth of a 5k
    // `smart_search`).
    if !holds_secret_word(line) {
        return Vec::new();
    }
    // `the password is "x"` is a secret wherever it is written, comments included.
    let mut spans = phrase_secrets(line);
    // Every rule below masks the value after a key and a `:` or `=` separator (`split_key`,
    // `inline_secrets`): a line with neither has nothing more to mask. One byte scan, where
    // the rules cost string searches per line (a quarter of a 5k `smart_search`). A rule that
    // needs no separator must go above this check.
    if !line.bytes().any(|b| b == b':' || b == b'=') {
        return spans;
    }
    let start = line.len() - line.trim_start().len();
    if is_comment(&line[start..], ctx) {
        return spans;
    }
    // In prose, list markers, quote marks and heading marks come before a key.
    let lead = if ctx == LineContext::Prose {
        line.len()
            - line
                .trim_start_matches(|c: char| c.is_whitespace() || "#>*+-".contains(c))
                .len()
    } else {
        0
    };
    let mut from = 0;
    if let Some(span) = find_secret(&line[lead..], ctx) {
        let span = (span.start + lead)..(span.end + lead);
        from = span.end;
        spans.push(span);
    }
    inline_secrets(line, from, &mut spans);
    sort_by_start(&mut spans);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

/// What every sensitive key ([`is_sensitive_key`]: a [`SENSITIVE_PARTS`] word, or `key` with a
/// qualifier) and every [`PHRASE_WORDS`] word contains, in ASCII lower case.
const SECRET_WORD_PARTS: &[&str] = &[
    "passw",
    "passphrase",
    "secret",
    "token",
    "credential",
    "private",
    "jwt",
    "cert",
    "key",
];

/// The [`SECRET_WORD_PARTS`] that may start at a byte, and that its next byte may continue.
const SECRET_FIRST: [u64; 256] = crate::security::injection::pair_bits(&[SECRET_WORD_PARTS], 0);
const SECRET_SECOND: [u64; 256] = crate::security::injection::pair_bits(&[SECRET_WORD_PARTS], 1);

/// Whether `line` contains a [`SECRET_WORD_PARTS`] word in any ASCII case: a line without one
/// holds no key or phrase [`find_secrets`] masks. Only the words whose first two bytes fit a
/// position are compared there (this runs over every line of every snippet).
fn holds_secret_word(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(1)).any(|i| {
        let mut words = SECRET_FIRST[usize::from(b[i].to_ascii_lowercase())]
            & SECRET_SECOND[usize::from(b[i + 1].to_ascii_lowercase())];
        while words != 0 {
            let w = SECRET_WORD_PARTS[words.trailing_zeros() as usize].as_bytes();
            words &= words - 1;
            if b[i..].len() >= w.len() && b[i..i + w.len()].eq_ignore_ascii_case(w) {
                return true;
            }
        }
        false
    })
}

/// Words that, followed by `is` or `was` and a quoted or backticked literal, make that literal
/// a secret in any text, comments included (`the admin password is \`hunter2\``).
const PHRASE_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "api key",
    "apikey",
    "api_key",
    "credentials",
    "private key",
];

/// The quoted literals that follow a [`PHRASE_WORDS`] word and `is`/`was`.
fn phrase_secrets(line: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    // A phrase needs a quoted literal after `is`/`was`: a line with no quote, or with no `is`
    // and no `as` in any case, has none. One byte pass, where the search below costs a
    // lower-cased copy and ten substring searches per line (a third of a 5k `smart_search`).
    let b = line.as_bytes();
    let verb = b
        .windows(2)
        .any(|w| matches!(w[0] | 0x20, b'i' | b'a') && w[1] | 0x20 == b's');
    if !verb || !b.iter().any(|c| matches!(c, b'"' | b'\'' | b'`')) {
        return spans;
    }
    let lower = line.to_ascii_lowercase();
    for word in PHRASE_WORDS {
        let mut from = 0;
        while let Some(found) = lower[from..].find(word) {
            let at = from + found;
            from = at + word.len();
            let before_ok = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            if !before_ok {
                continue;
            }
            let mut j = at + word.len();
            // `passwords`, `tokens`, `secret's`.
            if lower[j..].starts_with('s') {
                j += 1;
            }
            let skip_ws = |j: usize| j + (line[j..].len() - line[j..].trim_start().len());
            j = skip_ws(j);
            let rest = &lower[j..];
            // Only the prose verbs: `key: "x"` / `key = "x"` are the key-name rules' business
            // (which know enums, self-values and comments).
            let sep = ["is ", "was ", "is:"]
                .iter()
                .find(|s| rest.starts_with(**s));
            let Some(sep) = sep else { continue };
            j = skip_ws(j + sep.len());
            if let Some((end, Some(span))) = quoted_secret(line, j, word) {
                spans.push(span);
                from = end.max(from);
            }
        }
    }
    spans
}

/// Scans `line[from..]` for `key: "literal"` / `key = "literal"` pairs that follow `(`, `[`,
/// `{` or `,`, masking quoted literals only (the rule for code).
fn inline_secrets(line: &str, from: usize, spans: &mut Vec<Range<usize>>) {
    let bytes = line.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if !matches!(bytes[i], b'(' | b'[' | b'{' | b',') {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        j += line[j..].len() - line[j..].trim_start().len();
        let Some((key, after_key)) = inline_key(line, j) else {
            i += 1;
            continue;
        };
        let mut k = after_key + (line[after_key..].len() - line[after_key..].trim_start().len());
        let Some((_, sep_len)) = separator(&line[k..]) else {
            i += 1;
            continue;
        };
        k += sep_len;
        k += line[k..].len() - line[k..].trim_start().len();
        match is_sensitive_key(key)
            .then(|| quoted_secret(line, k, key))
            .flatten()
        {
            Some((end, span)) => {
                spans.extend(span);
                i = end;
            }
            None => i += 1,
        }
    }
}

/// An identifier or quoted key starting at `at`, and the offset just after it.
fn inline_key(line: &str, at: usize) -> Option<(&str, usize)> {
    let s = &line[at..];
    let first = s.chars().next()?;
    if matches!(first, '"' | '\'' | '`') {
        let close = s[1..].find(first)? + 1;
        let key = &s[1..close];
        return is_key_word(key).then_some((key, at + close + 1));
    }
    if !(first.is_alphabetic() || first == '_' || first == '$') {
        return None;
    }
    let len = s
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '-' | '.')))
        .unwrap_or(s.len());
    Some((&s[..len], at + len))
}

/// For a quoted literal at `value_start`: where it ends, and the span to mask (`None` when the
/// literal is exempt). `None` when no literal starts there.
fn quoted_secret(
    line: &str,
    value_start: usize,
    key: &str,
) -> Option<(usize, Option<Range<usize>>)> {
    let value = &line[value_start..];
    let len = quoted_len(value)?;
    let end = value_start + len;
    let inner = unquote_literal(&value[..len]);
    if let Some(placeholder) = placeholder_default(inner, key) {
        let base = value_start + (inner.as_ptr() as usize - value.as_ptr() as usize);
        return Some((end, placeholder.map(|r| (base + r.start)..(base + r.end))));
    }
    if is_exempt_value(key, inner) {
        return Some((end, None));
    }
    Some((end, Some(value_start..end)))
}

/// Finds the byte span of the secret when the line as a whole is one assignment.
fn find_secret(line: &str, ctx: LineContext) -> Option<Range<usize>> {
    let mut pos = line.len() - line.trim_start().len();
    // A YAML list item or a `--flag`: the key is trimmed of leading dashes.
    let dashes = line[pos..].len() - line[pos..].trim_start_matches('-').len();
    if dashes > 0 {
        pos += dashes;
        pos += line[pos..].len() - line[pos..].trim_start().len();
    }
    let mut keyword_seen = false;
    loop {
        let skipped = skip_keyword(&line[pos..], ctx);
        if skipped == 0 {
            break;
        }
        keyword_seen = true;
        pos += skipped;
    }

    let (key, sep, after_sep) = split_key(line, pos, ctx, keyword_seen)?;
    if !is_sensitive_key(key) {
        return None;
    }
    let rest = &line[after_sep..];
    // `host:8080` or `scheme://…` is an address, not an assignment.
    if sep == Sep::Colon && rest.starts_with(|c: char| c.is_ascii_digit() || c == '/') {
        return None;
    }
    let mut value_start = after_sep + (rest.len() - rest.trim_start().len());
    if ctx == LineContext::Code && sep == Sep::Colon && !starts_quoted(&line[value_start..]) {
        // `password: string = "x"`: keep the annotation, look at what follows `=`.
        let eq = type_annotation_end(&line[value_start..])?;
        value_start += eq + 1;
        let rest = &line[value_start..];
        value_start += rest.len() - rest.trim_start().len();
    }
    let value = &line[value_start..];

    if let Some((end, span)) = quoted_secret(line, value_start, key) {
        // In prose, `Secrets: \`config.yml\` holds the password` is a sentence, not a value.
        if ctx == LineContext::Prose
            && !line[end..]
                .trim()
                .trim_matches(|c| ".,;)".contains(c))
                .is_empty()
        {
            return None;
        }
        return span;
    }
    if ctx == LineContext::Code {
        return None;
    }
    let mut bare = value.trim_end();
    if ctx == LineContext::Prose && bare.contains(char::is_whitespace) {
        // `Token: see the auth docs` is prose, not a value.
        return None;
    }
    if let Some(placeholder) = placeholder_default(bare, key) {
        let range = placeholder?;
        return Some((value_start + range.start)..(value_start + range.end));
    }
    if let Some(stripped) = bare.strip_suffix([',', ';']) {
        bare = stripped.trim_end();
    }
    if is_exempt_value(key, bare) || is_structure_opening(bare) || is_yaml_alias(bare) {
        return None;
    }
    Some(value_start..value_start + bare.len())
}

/// Comments and markup that never hold a key.
fn is_comment(s: &str, ctx: LineContext) -> bool {
    if ctx == LineContext::Prose {
        return s.is_empty() || s.starts_with("<!--");
    }
    if s.is_empty()
        || s == "--"
        || ["#", "//", "/*", "*", "<!--", "-- "]
            .iter()
            .any(|p| s.starts_with(p))
    {
        return true;
    }
    ctx == LineContext::Config && (s.starts_with(';') || s.starts_with('!'))
}

/// Length of a leading declaration keyword plus the whitespace after it, or 0.
fn skip_keyword(s: &str, ctx: LineContext) -> usize {
    let keywords: &[&str] = match ctx {
        LineContext::Code => CODE_KEYWORDS,
        LineContext::Config | LineContext::Prose => &["export"],
    };
    for kw in keywords {
        // A plain `if let` rather than a let-chain keeps the declared rust-version (1.85).
        if let Some(after) = s
            .strip_prefix(kw)
            .filter(|a| a.starts_with(char::is_whitespace))
        {
            return s.len() - after.trim_start().len();
        }
    }
    0
}

/// Splits `line[pos..]` into the key, the separator and the offset just after the separator.
fn split_key(
    line: &str,
    pos: usize,
    ctx: LineContext,
    keyword_seen: bool,
) -> Option<(&str, Sep, usize)> {
    let s = &line[pos..];
    let first = s.chars().next()?;
    if matches!(first, '"' | '\'' | '`') {
        let close = s[1..].find(first)? + 1;
        let key = &s[1..close];
        let after = &s[close + 1..];
        let skipped = after.len() - after.trim_start().len();
        let (sep, len) = separator(&after[skipped..])?;
        if key.is_empty() || key.contains(char::is_whitespace) {
            return None;
        }
        return Some((key, sep, pos + close + 1 + skipped + len));
    }
    // A byte search: both separators are ASCII (a char-set `find` decodes every character).
    let idx = s.bytes().position(|b| b == b':' || b == b'=')?;
    let (sep, len) = separator(&s[idx..])?;
    let mut raw = s[..idx].trim_end();
    if sep == Sep::Colon {
        raw = raw.strip_suffix(['?', '!']).unwrap_or(raw);
    } else if raw.ends_with(|c: char| "!<>+-*/%&|^~?.".contains(c)) {
        // `!=`, `<=`, `+=`, `?=` … are comparisons or compound updates, not declarations.
        return None;
    }
    let key = pick_key(raw, ctx, keyword_seen)?;
    Some((key, sep, pos + idx + len))
}

/// Recognises the separator at the start of `s` and its length.
fn separator(s: &str) -> Option<(Sep, usize)> {
    let mut chars = s.chars();
    let first = chars.next()?;
    let second = chars.next();
    match (first, second) {
        (':', Some('=')) => Some((Sep::Assign, 2)),
        (':', Some(':')) => None,
        (':', _) => Some((Sep::Colon, 1)),
        ('=', Some('>')) => Some((Sep::Assign, 2)),
        ('=', Some('=')) => None,
        ('=', _) => Some((Sep::Assign, 1)),
        _ => None,
    }
}

/// Chooses the key from the text before the separator, or refuses prose.
///
/// A single identifier-like word is the key. In code, `Type name` or (after a keyword)
/// `name Type` declarations are accepted too; other text with whitespace is left alone.
fn pick_key(raw: &str, ctx: LineContext, keyword_seen: bool) -> Option<&str> {
    if raw.is_empty() {
        return None;
    }
    let mut words = raw.split_whitespace();
    let first = words.next()?;
    let Some(second) = words.next() else {
        return is_key_word(first).then_some(first);
    };
    if ctx != LineContext::Code || words.next().is_some() {
        return None;
    }
    let typed = keyword_seen
        || first.starts_with(|c: char| c.is_ascii_uppercase() || matches!(c, '[' | '*' | '&'))
        || PRIMITIVE_TYPES.contains(&first);
    if !typed || !is_type_word(first) || !is_type_word(second) {
        return None;
    }
    [second, first]
        .into_iter()
        .find(|w| is_key_word(w) && is_sensitive_key(w))
}

/// Characters a key may be made of (`spring.datasource.password`, `$token`, `env["API_KEY"]`).
fn is_key_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "_-.$@[]\"'".contains(c))
}

/// Characters a type may be made of (`Map<String,String>`, `[]byte`, `&'static str`).
fn is_type_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "_.<>[]?&*,|'$@".contains(c))
}

/// In `string = "x"` (what follows `password:` in code), the offset of the `=`, when the text
/// before it is a type.
fn type_annotation_end(s: &str) -> Option<usize> {
    let eq = s.find('=')?;
    if s[eq + 1..].starts_with(['=', '>']) {
        return None;
    }
    let ty = s[..eq].trim();
    let is_type = !ty.is_empty()
        && !ty.ends_with(|c: char| "!<>+-*/%|^~?".contains(c))
        && ty
            .chars()
            .all(|c| c.is_alphanumeric() || c.is_whitespace() || "_.<>[]?&*,|:'".contains(c));
    is_type.then_some(eq)
}

/// True when `s` begins with a string literal (with an optional `r`, `b`, `f`, `@`, … prefix).
fn starts_quoted(s: &str) -> bool {
    quoted_len(s).is_some()
}

/// Length in bytes of the string literal at the start of `s`, including prefix and quotes.
///
/// An unterminated literal runs to the end of the line (it continues on the next one).
fn quoted_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut raw = false;
    while i < 2 && i < bytes.len() && b"bBrRfFuU@$".contains(&bytes[i]) {
        raw |= matches!(bytes[i], b'r' | b'R' | b'@');
        i += 1;
    }
    let mut hashes = 0;
    if raw {
        while bytes.get(i + hashes) == Some(&b'#') {
            hashes += 1;
        }
    }
    let start = i + hashes;
    let q = *bytes.get(start)?;
    if !matches!(q, b'"' | b'\'' | b'`') {
        return None;
    }
    if i > 0 && !s[..i].chars().all(|c| "bBrRfFuU@$".contains(c)) {
        return None;
    }
    let raw = raw || q == b'`';
    let triple = bytes.get(start + 1) == Some(&q) && bytes.get(start + 2) == Some(&q);
    let open = if triple { 3 } else { 1 };
    let mut j = start + open;
    while j < bytes.len() {
        let b = bytes[j];
        if b == b'\\' && !raw {
            j += 2;
            continue;
        }
        if b == q {
            let closes = if triple {
                bytes.get(j + 1) == Some(&q) && bytes.get(j + 2) == Some(&q)
            } else {
                true
            };
            let close_len = if triple { 3 } else { 1 };
            if closes
                && bytes[j + close_len..]
                    .iter()
                    .take(hashes)
                    .all(|&h| h == b'#')
            {
                let end = j + close_len + hashes;
                if end <= bytes.len() {
                    return Some(end);
                }
            }
        }
        j += 1;
    }
    Some(s.trim_end().len())
}

/// The text between the quotes of a literal found by [`quoted_len`].
fn unquote_literal(literal: &str) -> &str {
    let body = literal.trim_start_matches(|c: char| "bBrRfFuU@$".contains(c));
    let body = body.trim_start_matches('#').trim_end_matches('#');
    let Some(q) = body.chars().next() else {
        return body;
    };
    let triple: String = std::iter::repeat_n(q, 3).collect();
    let open = if body.starts_with(&triple) { 3 } else { 1 };
    let inner = &body[open.min(body.len())..];
    let close = if open == 3 {
        triple.as_str()
    } else {
        &body[..1]
    };
    inner.strip_suffix(close).unwrap_or(inner)
}

/// For a `${NAME}` / `${NAME:default}` / `${NAME:-default}` value: `None` when it is not a
/// placeholder, `Some(None)` when it is harmless, `Some(Some(range))` when its default (at
/// `range` within `value`) is a secret.
fn placeholder_default(value: &str, key: &str) -> Option<Option<Range<usize>>> {
    let body = value.strip_prefix("${")?.strip_suffix('}')?;
    let Some(colon) = body.find(':') else {
        return Some(None);
    };
    let mut start = 2 + colon + 1;
    if value[start..].starts_with('-') {
        start += 1;
    }
    let end = value.len() - 1;
    let default = &value[start..end];
    if let Some(inner) = placeholder_default(default, key) {
        return Some(inner.map(|r| (start + r.start)..(start + r.end)));
    }
    if is_exempt_value(key, default) {
        return Some(None);
    }
    Some(Some(start..end))
}

/// Values shown even under a sensitive key.
fn is_exempt_value(key: &str, value: &str) -> bool {
    let value = value.trim();
    value.is_empty()
        || PLAIN_WORDS.iter().any(|w| value.eq_ignore_ascii_case(w))
        || is_env_name(value)
        || is_reference(value)
        || is_self_value(key, value)
}

/// `DB_PASSWORD`: an upper-case identifier with an underscore, which names a variable rather
/// than holding a secret. (`HUNTER2`, without an underscore, is still masked.)
fn is_env_name(value: &str) -> bool {
    value.starts_with(|c: char| c.is_ascii_uppercase())
        && value.contains('_')
        && value
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `${…}`, `$NAME`, `#{…}`, `{{ … }}`: a reference resolved elsewhere.
fn is_reference(value: &str) -> bool {
    if (value.starts_with("${") || value.starts_with("#{")) && value.ends_with('}') {
        return true;
    }
    if value.starts_with("{{") && value.ends_with("}}") {
        return true;
    }
    value.strip_prefix('$').is_some_and(|name| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `REFRESH_TOKEN = 'refresh_token'`: the value is the key's own name (an enum or a constant
/// naming a field), compared ignoring case, `_`, `-` and `.`.
fn is_self_value(key: &str, value: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let value = norm(value);
    if value.is_empty() {
        return false;
    }
    let last = key.rsplit('.').next().unwrap_or(key);
    norm(key) == value || norm(last) == value
}

/// `{`, `[`, `|` and friends: the value continues on the next lines.
fn is_structure_opening(value: &str) -> bool {
    matches!(
        value,
        "{" | "[" | "{}" | "[]" | "[{" | "(" | "|" | ">" | "|-" | ">-" | "|+" | ">+"
    )
}

/// `*default_password`: a YAML alias, whose value is shown (and masked) where it is anchored.
fn is_yaml_alias(value: &str) -> bool {
    value.strip_prefix('*').is_some_and(|name| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    })
}

/// A well-known token format: a literal prefix and what may follow it.
struct TokenShape {
    prefix: &'static str,
    /// Characters allowed after the prefix.
    body: fn(u8) -> bool,
    /// Least and most body characters (`max` 0: no upper bound).
    min: usize,
    max: usize,
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn upper_alnum(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
fn alnum_underscore(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn alnum_dash(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}
fn base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

const TOKEN_SHAPES: &[TokenShape] = &[
    // AWS access key ids (long-term and temporary).
    TokenShape {
        prefix: "AKIA",
        body: upper_alnum,
        min: 16,
        max: 16,
    },
    TokenShape {
        prefix: "ASIA",
        body: upper_alnum,
        min: 16,
        max: 16,
    },
    // GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens.
    TokenShape {
        prefix: "ghp_",
        body: alnum,
        min: 36,
        max: 0,
    },
    TokenShape {
        prefix: "gho_",
        body: alnum,
        min: 36,
        max: 0,
    },
    TokenShape {
        prefix: "ghu_",
        body: alnum,
        min: 36,
        max: 0,
    },
    TokenShape {
        prefix: "ghs_",
        body: alnum,
        min: 36,
        max: 0,
    },
    TokenShape {
        prefix: "ghr_",
        body: alnum,
        min: 36,
        max: 0,
    },
    TokenShape {
        prefix: "github_pat_",
        body: alnum_underscore,
        min: 22,
        max: 0,
    },
    // Slack bot, user, app, refresh and config tokens.
    TokenShape {
        prefix: "xoxb-",
        body: alnum_dash,
        min: 10,
        max: 0,
    },
    TokenShape {
        prefix: "xoxp-",
        body: alnum_dash,
        min: 10,
        max: 0,
    },
    TokenShape {
        prefix: "xoxa-",
        body: alnum_dash,
        min: 10,
        max: 0,
    },
    TokenShape {
        prefix: "xoxr-",
        body: alnum_dash,
        min: 10,
        max: 0,
    },
    TokenShape {
        prefix: "xoxs-",
        body: alnum_dash,
        min: 10,
        max: 0,
    },
    TokenShape {
        prefix: "xoxe-",
        body: alnum_dash,
        min: 10,
        max: 0,
    },
    // Stripe secret and restricted keys.
    TokenShape {
        prefix: "sk_live_",
        body: alnum,
        min: 16,
        max: 0,
    },
    TokenShape {
        prefix: "sk_test_",
        body: alnum,
        min: 16,
        max: 0,
    },
    TokenShape {
        prefix: "rk_live_",
        body: alnum,
        min: 16,
        max: 0,
    },
    // Google API keys, npm and GitLab tokens.
    TokenShape {
        prefix: "AIza",
        body: base64url,
        min: 35,
        max: 35,
    },
    TokenShape {
        prefix: "npm_",
        body: alnum,
        min: 36,
        max: 36,
    },
    TokenShape {
        prefix: "glpat-",
        body: base64url,
        min: 20,
        max: 0,
    },
];

const PEM_BEGIN: &str = "-----BEGIN ";
const PEM_END: &str = "-----END ";

/// True when `line` opens a PEM private-key block (`-----BEGIN [RSA |EC |OPENSSH |…]PRIVATE
/// KEY-----`); returns the offset just after the opening marker.
fn private_key_begin(line: &str) -> Option<usize> {
    let at = line.find(PEM_BEGIN)?;
    let rest = &line[at + PEM_BEGIN.len()..];
    let close = rest.find("-----")?;
    let label = &rest[..close];
    (label.ends_with("PRIVATE KEY") && label.len() < 40).then_some(at + PEM_BEGIN.len() + close + 5)
}

/// Masks secrets by value shape in `text` (see the module docs): each span is replaced by
/// [`REDACTED`], a private-key block's body (one line or many) by one [`REDACTED`] per line.
/// Borrowed back untouched when nothing matched, the common case.
pub fn mask_shapes(text: &str) -> (std::borrow::Cow<'_, str>, u32) {
    if !might_hold_shape(text) {
        return (std::borrow::Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut count = 0u32;
    let mut in_key = false;
    for piece in text.split_inclusive('\n') {
        let body = piece.trim_end_matches(['\n', '\r']);
        let ending = &piece[body.len()..];
        if in_key {
            match body.find(PEM_END) {
                Some(end) => {
                    in_key = false;
                    if end > 0 {
                        out.push_str(REDACTED);
                    }
                    out.push_str(&body[end..]);
                }
                None => out.push_str(REDACTED),
            }
            out.push_str(ending);
            continue;
        }
        // The whole-text pre-check, again per line: a line without a shape's first bytes
        // (nearly every line of a text holding one URL) skips some twenty substring
        // searches. Every shape starts with 3 or more bytes, so the check sees it whole.
        if !might_hold_shape(body) {
            out.push_str(body);
            out.push_str(ending);
            continue;
        }
        let mut spans = shape_spans(body);
        if let Some(after) = private_key_begin(body) {
            match body[after..].find(PEM_END) {
                // A whole key on one line (a JSON string with `\n` escapes).
                Some(end) => spans.push(after..after + end),
                None => {
                    spans.push(after..body.len());
                    in_key = true;
                }
            }
            count = count.saturating_add(1);
        }
        spans.retain(|r| r.start < r.end);
        sort_by_start(&mut spans);
        let mut copied = 0;
        for span in spans {
            if span.start < copied {
                continue;
            }
            out.push_str(&body[copied..span.start]);
            out.push_str(REDACTED);
            copied = span.end;
            count = count.saturating_add(1);
        }
        out.push_str(&body[copied..]);
        out.push_str(ending);
    }
    if count == 0 {
        return (std::borrow::Cow::Borrowed(text), 0);
    }
    (std::borrow::Cow::Owned(out), count)
}

/// A cheap pre-check, one pass over the bytes: does `text` hold any substring a shape starts
/// with? (It runs over every tool answer, so it must cost microseconds, not one scan per shape.)
fn might_hold_shape(text: &str) -> bool {
    let b = text.as_bytes();
    let end = b.len().saturating_sub(2);
    // Every arm of [`shape_starts_at`] needs its own second byte: one test of the pair through
    // two tables rules out nearly every position (this scan runs over every answer's text,
    // snippets and data strings, a tenth of a 5k `smart_search` as a `match` per byte).
    (0..end).any(|i| {
        SHAPE_FIRST[usize::from(b[i])] & SHAPE_SECOND[usize::from(b[i + 1])] != 0
            && shape_starts_at(b, i)
    })
}

/// Whether a shape may start at `b[i]`, judged on its first bytes (`b` holds at least two
/// bytes past `i`): the per-byte test behind [`might_hold_shape`].
#[inline]
fn shape_starts_at(b: &[u8], i: usize) -> bool {
    let token_at = |i: usize| {
        TOKEN_SHAPES
            .iter()
            .any(|t| b[i..].starts_with(t.prefix.as_bytes()))
    };
    let (next, third) = (b[i + 1], b[i + 2]);
    match b[i] {
        b':' => next == b'/' && third == b'/',
        b'-' => next == b'-' && b[i..].starts_with(PEM_BEGIN.as_bytes()),
        b'e' => next == b'y' && third == b'J',
        b'A' => matches!(next, b'K' | b'S' | b'I') && token_at(i),
        b'g' => matches!(next, b'h' | b'i' | b'l') && token_at(i),
        b'x' => next == b'o' && token_at(i),
        b's' | b'r' => next == b'k' && token_at(i),
        b'n' => next == b'p' && token_at(i),
        _ => false,
    }
}

/// The arms of [`shape_starts_at`] as (the first bytes it accepts, the second bytes that may
/// follow them), one arm per bit of [`SHAPE_FIRST`] and [`SHAPE_SECOND`].
const SHAPE_ARMS: [(&[u8], &[u8]); 8] = [
    (b":", b"/"),
    (b"-", b"-"),
    (b"e", b"y"),
    (b"A", b"KSI"),
    (b"g", b"hil"),
    (b"x", b"o"),
    (b"sr", b"k"),
    (b"n", b"p"),
];

/// The table of [`SHAPE_ARMS`]' first bytes (`second` false) or second bytes (`second` true):
/// each byte's entry has the bit of every arm naming it there.
const fn shape_pair_table(second: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut arm = 0;
    while arm < SHAPE_ARMS.len() {
        let bytes = if second {
            SHAPE_ARMS[arm].1
        } else {
            SHAPE_ARMS[arm].0
        };
        let mut k = 0;
        while k < bytes.len() {
            t[bytes[k] as usize] |= 1 << arm;
            k += 1;
        }
        arm += 1;
    }
    t
}

/// The first bytes of [`shape_starts_at`]'s arms, one bit per arm, and in [`SHAPE_SECOND`]
/// the second bytes each arm accepts, with the same bits: a pair whose bits do not meet
/// matches no arm.
static SHAPE_FIRST: [u8; 256] = shape_pair_table(false);
static SHAPE_SECOND: [u8; 256] = shape_pair_table(true);

/// The spans of shaped secrets on one line (URL passwords, tokens, JWTs).
fn shape_spans(line: &str) -> Vec<Range<usize>> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    // scheme://user:password@host — the password.
    let mut from = 0;
    while let Some(found) = line[from..].find("://") {
        let start = from + found + 3;
        from = start;
        let userinfo_end = bytes[start..]
            .iter()
            .position(|&b| {
                matches!(b, b'@' | b'/' | b'?' | b'#')
                    || b.is_ascii_whitespace()
                    || b"\"'`<>()[]{},;".contains(&b)
            })
            .map_or(bytes.len(), |p| start + p);
        if bytes.get(userinfo_end) != Some(&b'@') {
            continue;
        }
        let Some(colon) = line[start..userinfo_end].find(':') else {
            continue;
        };
        let pw = (start + colon + 1)..userinfo_end;
        let value = &line[pw.clone()];
        let placeholder = value.is_empty()
            || value.starts_with('$')
            || value.starts_with("{{")
            || value.starts_with('%')
            || value.starts_with('<')
            || value.chars().all(|c| c == '*' || c == 'x' || c == 'X');
        if !placeholder {
            spans.push(pw);
        }
    }
    // Well-known token formats, on word boundaries.
    for shape in TOKEN_SHAPES {
        let mut from = 0;
        while let Some(found) = line[from..].find(shape.prefix) {
            let at = from + found;
            from = at + shape.prefix.len();
            if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
                continue;
            }
            let body_start = at + shape.prefix.len();
            let len = bytes[body_start..]
                .iter()
                .take_while(|&&b| (shape.body)(b))
                .count();
            let fits = len >= shape.min && (shape.max == 0 || len == shape.max);
            let bounded = shape.max == 0
                || bytes
                    .get(body_start + len)
                    .is_none_or(|b| !b.is_ascii_alphanumeric());
            if fits && bounded {
                spans.push(at..body_start + len);
                from = body_start + len;
            }
        }
    }
    // JWTs: header.payload.signature, base64url, the header starting `eyJ` (`{"`).
    let mut from = 0;
    while let Some(found) = line[from..].find("eyJ") {
        let at = from + found;
        from = at + 3;
        if at > 0 && base64url(bytes[at - 1]) {
            continue;
        }
        let mut end = at;
        let mut parts = 0;
        let mut short = false;
        loop {
            let len = bytes[end..].iter().take_while(|&&b| base64url(b)).count();
            short |= len < 8;
            end += len;
            parts += 1;
            if parts == 3 || bytes.get(end) != Some(&b'.') {
                break;
            }
            end += 1;
        }
        if parts == 3 && !short {
            spans.push(at..end);
            from = end;
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_word_holds_a_part_the_line_filter_looks_for() {
        let parts = |w: &str| {
            let lower = w.to_ascii_lowercase();
            SECRET_WORD_PARTS.iter().any(|p| lower.contains(p))
        };
        for w in SENSITIVE_PARTS.iter().chain(PHRASE_WORDS).chain(&["key"]) {
            assert!(parts(w), "{w}: no part of SECRET_WORD_PARTS in it");
        }
        assert!(holds_secret_word("const DB_PASSWD = 1"));
        assert!(holds_secret_word("é signingKey"));
        assert!(!holds_secret_word("let total = price * count; // café"));
    }
    use LineContext::{Code, Config, Prose};

    const R: &str = REDACTED;

    #[test]
    fn sensitive_keys() {
        let yes = [
            "password",
            "DB_PASSWORD",
            "spring.datasource.password",
            "jwt.secret",
            "apiKey",
            "API_KEY",
            "api-key",
            "access_key",
            "signing-key",
            "encryption.key",
            "encryptionKey",
            "signingKey",
            "privateKey",
            "client_credentials",
            "ssl.cert.path",
            "github_token",
            "\"passphrase\"",
        ];
        for key in yes {
            assert!(is_sensitive_key(key), "{key}");
        }
        let no = [
            "",
            "key",
            "cache.key",
            "partition_key",
            "monkey",
            "username",
            "host",
            "auth",
            "primaryKey",
        ];
        for key in no {
            assert!(!is_sensitive_key(key), "{key}");
        }
    }

    #[test]
    fn masked_lines() {
        let table: &[(LineContext, &str, String)] = &[
            // YAML
            (Config, "password: hunter2", format!("password: {R}")),
            (
                Config,
                "    password: hunter2   ",
                format!("    password: {R}   "),
            ),
            (Config, "  - token: abc123", format!("  - token: {R}")),
            (Config, "secret: \"s3cr3t\"", format!("secret: {R}")),
            (Config, "password: hunter2 # prod", format!("password: {R}")),
            (Config, "password: HUNTER2", format!("password: {R}")),
            (
                Config,
                "jwt.expiration: 86400",
                format!("jwt.expiration: {R}"),
            ),
            // .properties and .env
            (
                Config,
                "spring.datasource.password=hunter2",
                format!("spring.datasource.password={R}"),
            ),
            (
                Config,
                "spring.datasource.password = hunter2",
                format!("spring.datasource.password = {R}"),
            ),
            (
                Config,
                "jwt.secret=${JWT_SECRET:changeme}",
                format!("jwt.secret=${{JWT_SECRET:{R}}}"),
            ),
            (
                Config,
                "DB_PASSWORD=${DB_PASSWORD:-hunter2}",
                format!("DB_PASSWORD=${{DB_PASSWORD:-{R}}}"),
            ),
            (
                Config,
                "export API_TOKEN=abc",
                format!("export API_TOKEN={R}"),
            ),
            (Config, "API_TOKEN=abc", format!("API_TOKEN={R}")),
            // TypeScript / JavaScript
            (
                Code,
                "const password = 'x';",
                format!("const password = {R};"),
            ),
            (
                Code,
                "  export const API_KEY = \"k-123\";",
                format!("  export const API_KEY = {R};"),
            ),
            (
                Code,
                "  private readonly secret = `abc`;",
                format!("  private readonly secret = {R};"),
            ),
            (
                Code,
                "  password: string = \"x\";",
                format!("  password: string = {R};"),
            ),
            (Code, "  password: 'x',", format!("  password: {R},")),
            (
                Code,
                "this.token = 'abc'; // test",
                format!("this.token = {R}; // test"),
            ),
            // JSON in code (and JSON config)
            (
                Code,
                "  \"password\": \"x\",",
                format!("  \"password\": {R},"),
            ),
            (
                Config,
                "  \"client_secret\": \"x\"",
                format!("  \"client_secret\": {R}"),
            ),
            // Java
            (
                Code,
                "    private static final String DB_PASSWORD = \"hunter2\";",
                format!("    private static final String DB_PASSWORD = {R};"),
            ),
            (
                Code,
                "String token = \"abc\";",
                format!("String token = {R};"),
            ),
            // Go
            (Code, "\tpassword := \"x\"", format!("\tpassword := {R}")),
            (
                Code,
                "const apiSecret = \"x\"",
                format!("const apiSecret = {R}"),
            ),
            (
                Code,
                "var token string = \"x\"",
                format!("var token string = {R}"),
            ),
            // Python
            (Code, "PASSWORD = \"x\"", format!("PASSWORD = {R}")),
            (Code, "password: str = 'x'", format!("password: str = {R}")),
            (
                Code,
                "    self.secret_key = r'abc'",
                format!("    self.secret_key = {R}"),
            ),
            (Code, "TOKEN = \"\"\"abc\"\"\"", format!("TOKEN = {R}")),
            (
                Code,
                "os.environ[\"API_TOKEN\"] = \"abc\"",
                format!("os.environ[\"API_TOKEN\"] = {R}"),
            ),
            // Kotlin
            (Code, "val password = \"x\"", format!("val password = {R}")),
            (
                Code,
                "    private val apiKey: String = \"x\"",
                format!("    private val apiKey: String = {R}"),
            ),
            (
                Code,
                "const val JWT_SECRET = \"x\"",
                format!("const val JWT_SECRET = {R}"),
            ),
            // Rust
            (
                Code,
                "pub const API_TOKEN: &str = \"x\";",
                format!("pub const API_TOKEN: &str = {R};"),
            ),
            (
                Code,
                "static SECRET: &'static str = r#\"a\"b\"#;",
                format!("static SECRET: &'static str = {R};"),
            ),
            (
                Code,
                "let password: String = \"x\".into();",
                format!("let password: String = {R}.into();"),
            ),
            // PHP / Ruby style
            (
                Code,
                "  'password' => 'x',",
                format!("  'password' => {R},"),
            ),
            (Code, "$password = 'x';", format!("$password = {R};")),
            // Placeholders in code whose default is a secret.
            (
                Code,
                "password: \"${DB_PASSWORD:hunter2}\"",
                format!("password: \"${{DB_PASSWORD:{R}}}\""),
            ),
        ];
        assert!(table.len() >= 20);
        for (ctx, line, expected) in table {
            assert_eq!(
                mask_line(line, *ctx).as_deref(),
                Some(expected.as_str()),
                "{ctx:?}: {line:?}"
            );
        }
    }

    #[test]
    fn lines_left_alone() {
        let table: &[(LineContext, &str)] = &[
            // Expressions in code.
            (Code, "password: dto.password"),
            (Code, "  password: dto.password,"),
            (Code, "password!: string;"),
            (Code, "password?: string;"),
            (Code, "token = config.get(k)"),
            (Code, "let token = env::var(\"TOKEN\")?;"),
            (Code, "String password = request.getParameter(\"p\");"),
            (Code, "if password == \"x\" {"),
            (Code, "if (password != 'x') {"),
            (Code, "token += 'x'"),
            (Code, "Password string `json:\"password\"`"),
            (Code, "@Value(\"${jwt.secret}\") private String secret;"),
            (Code, "handler: () => \"token\""),
            // Environment-variable names as values.
            (Code, "\"password\": \"DB_PASSWORD\","),
            (Config, "password: DB_PASSWORD"),
            (Config, "secret=MY_APP_SECRET"),
            // References.
            (Config, "password: ${DB_PASSWORD}"),
            (Config, "password: ${DB_PASSWORD:}"),
            (Config, "password: ${DB_PASSWORD:${FALLBACK_PASSWORD}}"),
            (Code, "password: \"${DB_PASSWORD}\","),
            (Config, "token: {{ .Values.token }}"),
            (Config, "API_TOKEN=$GITHUB_TOKEN"),
            (Config, "password: *default_password"),
            // Enum self-values.
            (Code, "  REFRESH_TOKEN = 'refresh_token',"),
            (Code, "  RefreshToken = \"refresh-token\","),
            (Code, "case password = \"password\""),
            (Config, "grant.type.token: token"),
            // Booleans, null and empties.
            (Config, "token: true"),
            (Config, "secret: null"),
            (Config, "secret: ~"),
            (Code, "password: false,"),
            (Code, "password = \"\""),
            (Config, "password:"),
            (Config, "password: ''"),
            // Object openings and block scalars.
            (Code, "\"auth\": {"),
            (Code, "\"secret\": {"),
            (Config, "secrets: {"),
            (Config, "tokens:"),
            (Config, "private_key: |"),
            // Keys with whitespace, prose and comments.
            (Config, "my password: hunter2"),
            (Code, "the password = \"x\""),
            (Code, "// password = \"x\""),
            (Config, "# password: hunter2"),
            (Config, "! password=hunter2"),
            (Code, " * @param password the password: 'x'"),
            (Code, "-- password = 'x'"),
            (Config, "Remember to rotate the secret: it expires"),
            // Addresses.
            (Config, "token-service:8080"),
            (Config, "tokens.example.com:443"),
            (Config, "secret.url://vault"),
            (Code, "Foo::SECRET = \"x\""),
            // Not sensitive.
            (Config, "username: admin"),
            (Code, "const cacheKey = 'x';"),
        ];
        for (ctx, line) in table {
            assert_eq!(mask_line(line, *ctx), None, "{ctx:?}: {line:?}");
        }
    }

    #[test]
    fn inline_pairs() {
        // Every case is a line of code.
        let table: &[(&str, Option<String>)] = &[
            (
                "db.connect(host=\"h\", password=\"x\")",
                Some(format!("db.connect(host=\"h\", password={R})")),
            ),
            (
                "{ user: \"a\", password: \"b\", token: 'c' }",
                Some(format!("{{ user: \"a\", password: {R}, token: {R} }}")),
            ),
            (
                "$cfg = ['password' => 'x', 'user' => 'u'];",
                Some(format!("$cfg = ['password' => {R}, 'user' => 'u'];")),
            ),
            (
                "auth = {\"token\": \"abc\"}",
                Some(format!("auth = {{\"token\": {R}}}")),
            ),
            (
                "creds = Creds(password=\"x\"), secret = \"y\"",
                Some(format!("creds = Creds(password={R}), secret = {R}")),
            ),
            ("login(password=pw, token=get())", None),
            ("f(password=\"DB_PASSWORD\", token=\"${T}\")", None),
            ("// f(password=\"x\")", None),
            ("assert(password == \"x\")", None),
        ];
        for (line, expected) in table {
            assert_eq!(mask_line(line, Code), *expected, "{line:?}");
        }
        let (_, count) = mask_text("f(password=\"a\", token=\"b\")\nsecret = \"c\"", Code);
        assert_eq!(count, 3);
    }

    #[test]
    fn text_counts_and_keeps_line_endings() {
        let text = "user: a\r\npassword: b\r\ntoken: ${T}\nsecret: c";
        let (masked, count) = mask_text(text, Config);
        assert_eq!(count, 2);
        assert_eq!(
            masked,
            format!("user: a\r\npassword: {R}\r\ntoken: ${{T}}\nsecret: {R}")
        );
        assert_eq!(mask_text("", Code), (String::new(), 0));
        assert_eq!(mask_text("a\n\n", Code), ("a\n\n".to_owned(), 0));
    }

    #[test]
    fn config_values() {
        let table: &[(&str, &str, Option<&str>)] = &[
            ("spring.datasource.password", "hunter2", Some(R)),
            ("jwt.secret", "\"abc\"", Some(R)),
            ("jwt.secret", "${JWT_SECRET:changeme}", Some(R)),
            ("jwt.secret", "${JWT_SECRET}", None),
            ("jwt.secret", "${JWT_SECRET:}", None),
            ("password", "DB_PASSWORD", None),
            ("password", "", None),
            ("password", "  ", None),
            ("password", "true", None),
            ("password", "'null'", None),
            ("oauth.grant.refresh_token", "refresh_token", None),
            ("server.port", "8080", None),
            ("api.key", "x", Some(R)),
        ];
        for (key, value, expected) in table {
            assert_eq!(mask_config_value(key, value), *expected, "{key} = {value}");
        }
    }

    #[test]
    fn odd_input_never_panics() {
        let lines = [
            "static SECRET: &'static str = r#\"a\"b\"#;",
            "TOKEN = \"\"\"abc\"\"\"",
            "password: \"${DB_PASSWORD:${X:-y}}\"",
            "  - 'password' => `x\\`",
            "token: \"ünïcödé\\\"ß\" ;",
            "pub(crate) const API_KEY: [u8; 2] = b\"ab\";",
            "--password=${",
            "secret: 'unterminated",
        ];
        for line in lines {
            for (i, _) in line.char_indices().chain([(line.len(), ' ')]) {
                for ctx in [Code, Config] {
                    let _ = mask_line(&line[..i], ctx);
                    let _ = mask_line(&line[i..], ctx);
                }
            }
        }
        assert_eq!(
            mask_line("secret: 'unterminated", Config),
            Some(format!("secret: {R}"))
        );
    }

    #[test]
    fn shapes_are_masked_whatever_the_name() {
        let cases = [
            "url = \"postgres://app:s3cr3t-pw@db.internal:5432/orders\"",
            "const aws = 'AKIAIOSFODNN7EXAMPLE';",
            "x := \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"",
            "slack: xoxb-1234567890-abcdefghij",
            "auth = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'",
            "stripe = sk_live_abcdefghijklmnop1234",
            "k = \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\"",
        ];
        for line in cases {
            let (out, n) = mask_shapes(line);
            assert!(n >= 1 && out.contains(REDACTED), "{line} -> {out}");
            for secret in [
                "s3cr3t-pw",
                "AKIAIOSF",
                "ghp_abc",
                "xoxb-123",
                "eyJhbGci",
                "sk_live_a",
                "MIIEvQ",
            ] {
                assert!(!out.contains(secret), "{line} -> {out}");
            }
        }
        let block = "key: |\n  -----BEGIN RSA PRIVATE KEY-----\n  MIIEowIBAAKCAQEA\n  abcdef\n  -----END RSA PRIVATE KEY-----\nnext: 1\n";
        let (out, _) = mask_shapes(block);
        assert!(
            !out.contains("MIIEowIBAAKCAQEA") && !out.contains("abcdef"),
            "{out}"
        );
        assert!(
            out.contains("-----END RSA PRIVATE KEY-----") && out.contains("next: 1"),
            "{out}"
        );
        assert!(
            TOKEN_SHAPES
                .iter()
                .all(|t| might_hold_shape(&format!("x {}", t.prefix)))
        );
        // The pair tables rule out no position the arms accept: the same answers as the
        // plain per-byte scan, on every pair and triple of the bytes the arms name.
        let reference = |text: &str| {
            let b = text.as_bytes();
            (0..b.len().saturating_sub(2)).any(|i| shape_starts_at(b, i))
        };
        let bytes = ":/-eyJAKSIghilxoskrnp_BEGIN -a";
        for a in bytes.chars() {
            for b in bytes.chars() {
                for c in bytes.chars() {
                    let t = format!("{a}{b}{c}");
                    assert_eq!(might_hold_shape(&t), reference(&t), "{t:?}");
                }
            }
        }
        for t in TOKEN_SHAPES
            .iter()
            .map(|t| format!("{}xx", t.prefix))
            .chain([
                "-----BEGIN RSA PRIVATE KEY-----".to_string(),
                "a://b".into(),
                "eyJhbGci".into(),
            ])
        {
            for cut in 0..=t.len() {
                let t = &t[..cut];
                assert_eq!(might_hold_shape(t), reference(t), "{t:?}");
            }
        }
        for harmless in [
            "see https://example.com/path?a=b",
            "postgres://app@db/orders",
            "postgres://app:${DB_PASSWORD}@db/orders",
            "AKIA is a prefix",
            "eyJ alone",
            "BAKIAIOSFODNN7EXAMPLE1",
        ] {
            assert_eq!(mask_shapes(harmless).1, 0, "{harmless}");
        }
    }

    #[test]
    fn prose_names_and_phrases() {
        let masked = [
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "- password: hunter2",
            "The admin password is `hunter2`.",
            "the api key is \"abc123\"",
            "    export API_TOKEN=abc123",
        ];
        for line in masked {
            let out = mask_line(line, Prose).unwrap_or_else(|| panic!("{line}"));
            assert!(
                !out.contains("hunter2") && !out.contains("abc123") && !out.contains("wJalr"),
                "{out}"
            );
        }
        for line in [
            "Token: see the auth docs.",
            "- Secrets: `services/payments/application.yml` holds a password and an API",
            "Remember to rotate the secret: it expires",
            "# Passwords",
            "The password is required.",
        ] {
            assert_eq!(mask_line(line, Prose), None, "{line}");
        }
        // Phrases count in code comments too.
        assert!(mask_line("// the password is \"hunter2\"", Code).is_some());
    }

    #[test]
    fn context_from_path() {
        let table = [
            ("application.yml", Config),
            ("application-prod.YAML", Config),
            ("app.properties", Config),
            (".env", Config),
            (".env.local", Config),
            ("prod.env", Config),
            ("Cargo.toml", Config),
            ("main.ts", Code),
            ("Main.java", Code),
            ("settings.py", Code),
            ("README.md", Prose),
            ("notes.txt", Prose),
        ];
        for (name, ctx) in table {
            assert_eq!(LineContext::for_path(Path::new(name)), ctx, "{name}");
        }
    }
}
