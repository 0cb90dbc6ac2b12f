//! Java `.properties` extractor: configuration keys (Spring `application.properties` and
//! friends) with secret values masked, as `java.util.Properties.load` reads them.
//!
//! Handles `key=value`, `key: value` and `key value`, `#`/`!` comment lines, logical lines
//! continued by an odd number of trailing backslashes (leading whitespace of the continuation
//! dropped), and escapes (`\t`, `\n`, `\r`, `\f`, `\uXXXX`, `\x` → `x`). A malformed `\u`
//! escape is kept literally instead of failing the file.

use super::yaml::mask_value;
use crate::index::facts::{FileFacts, Property};
use crate::index::lex::unescape_with;

/// Extracts the properties of one `.properties` file, keys as written (already dotted), values
/// unescaped and masked when the key is sensitive. `path` is unused.
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    FileFacts {
        properties: properties(text),
        ..FileFacts::default()
    }
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{c}')
}

/// True when `line` ends with an odd number of backslashes (the line continues).
fn continues(line: &str) -> bool {
    let n = line.len() - line.trim_end_matches('\\').len();
    n % 2 == 1
}

/// Splits a text on `\n`, `\r\n` and lone `\r`, as `Properties.load` does.
fn natural_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

/// All properties of `text`, in file order, each on the line where its logical line starts.
fn properties(text: &str) -> Vec<Property> {
    let lines = natural_lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let lno = i as u32 + 1;
        let first = lines[i].trim_start_matches(is_ws);
        i += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut logical = String::from(first);
        while continues(&logical) {
            logical.pop();
            let Some(next) = lines.get(i) else { break };
            i += 1;
            logical.push_str(next.trim_start_matches(is_ws));
        }
        let (key, value) = split(&logical);
        let key = unescape(key);
        let value = unescape(value);
        out.push(Property {
            value: mask_value(&key, &value),
            key,
            line: lno,
        });
    }
    out
}

/// Splits a logical line (leading whitespace removed) into raw key and raw value: the key ends
/// at the first unescaped `=`, `:` or whitespace; then whitespace and at most one `=`/`:`.
fn split(line: &str) -> (&str, &str) {
    let mut key_end = line.len();
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            chars.next();
        } else if c == '=' || c == ':' || is_ws(c) {
            key_end = i;
            break;
        }
    }
    let key = &line[..key_end];
    let mut rest = line[key_end..].trim_start_matches(is_ws);
    if let Some(r) = rest.strip_prefix(['=', ':']) {
        rest = r.trim_start_matches(is_ws);
    }
    (key, rest)
}

/// Resolves `.properties` escapes.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    unescape_with(s, |next, chars, out| match next {
        Some('t') => out.push('\t'),
        Some('n') => out.push('\n'),
        Some('r') => out.push('\r'),
        Some('f') => out.push('\u{c}'),
        Some('u') => {
            let mut hex = String::new();
            while hex.len() < 4 && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                hex.extend(chars.next());
            }
            let decoded = (hex.len() == 4)
                .then(|| u32::from_str_radix(&hex, 16).ok())
                .flatten()
                .and_then(char::from_u32);
            match decoded {
                Some(ch) => out.push(ch),
                // Surrogates and short escapes: keep what was written.
                None => {
                    out.push_str("\\u");
                    out.push_str(&hex);
                }
            }
        }
        Some(other) => out.push(other),
        None => {}
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{assert_properties, properties};

    /// The facts of `text` read as a Spring `application.properties`.
    fn facts(text: &str) -> FileFacts {
        extract("src/main/resources/application.properties", text)
    }

    const R: &str = "[REDACTED_SECRET: USE_ENV_OR_LOCAL_FALLBACK]";

    #[test]
    fn forms_comments_and_continuations() {
        let text = "# comment\n! also comment\n\nserver.port=8080\nspring.application.name: orders\nkey value with spaces\n  indented = x  \nlist=a,\\\n     b,\\\n     c\nodd=ends\\\\\nnext=1\nempty=\nbare\n\\#notcomment=1\n# comment ending \\\nafter=2\r\nwin=3\rmac=4";
        assert_properties(
            &facts(text),
            &[
                ("server.port", "8080", 4),
                ("spring.application.name", "orders", 5),
                ("key", "value with spaces", 6),
                ("indented", "x  ", 7),
                ("list", "a,b,c", 8),
                ("odd", "ends\\", 11),
                ("next", "1", 12),
                ("empty", "", 13),
                ("bare", "", 14),
                ("#notcomment", "1", 15),
                ("after", "2", 17),
                ("win", "3", 18),
                ("mac", "4", 19),
            ],
        );
    }

    #[test]
    fn escapes() {
        let text = "a\\=b\\:c\\ d = v\\tw\\n\ncaf\\u00e9=\\u0041\\u00\nx=\\q\\\\\nsep==value\n";
        assert_properties(
            &facts(text),
            &[
                ("a=b:c d", "v\tw\n", 1),
                ("café", "A\\u00", 2),
                ("x", "q\\", 3),
                ("sep", "=value", 4),
            ],
        );
    }

    #[test]
    fn masking() {
        let text = "spring.datasource.password=hunter2\napp.jwt.secret = ${JWT_SECRET}\nstripe.api.key: sk_1\nssl.enabled-token=true\nclient.secret=\napp.name=orders\nx.private-key=${K:inline}\n";
        assert_properties(
            &facts(text),
            &[
                ("spring.datasource.password", R, 1),
                ("app.jwt.secret", "${JWT_SECRET}", 2),
                ("stripe.api.key", R, 3),
                ("ssl.enabled-token", "true", 4),
                ("client.secret", "", 5),
                ("app.name", "orders", 6),
                ("x.private-key", &format!("${{K:{R}}}"), 7),
            ],
        );
    }

    #[test]
    fn hostile_input() {
        let _ = facts("\\");
        let _ = facts("a=\\u");
        let _ = facts("\u{0}\u{1}=\u{fffd}\\\n");
        let cont = "k=v\\\n".repeat(10_000);
        let f = facts(&cont);
        let got = properties(&f);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1.len(), 1 + 3 * 9_999);
        let long = format!("k={}", "x".repeat(1 << 20));
        assert_eq!(properties(&facts(&long))[0].1.len(), 1 << 20);
        assert!(facts("").properties.is_empty());
    }
}
