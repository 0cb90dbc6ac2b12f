//! Compact JSON text of a [`Value`], byte for byte what `serde_json::to_string` writes, and its
//! length without writing it.
//!
//! Every answer passes through here twice or three times (the 48 KiB cap measures the data,
//! then the response line is written), and an answer is mostly long strings (Markdown text,
//! snippets) with a newline every few dozen bytes. Built at opt-level "z", serde's writer
//! spends ~25 instructions per byte of such a string (a call into `io::Write` for every run
//! between two escapes); here a string is checked eight bytes at a time and copied run by run
//! into the `String`, and measuring only counts.
//!
//! The escapes are serde_json's: `"` `\\` and the control characters below U+0020 (`\b`,
//! `\t`, `\n`, `\f`, `\r`, else `\u00xx` in lower-case hex); nothing else (not U+007F, not
//! non-ASCII). Numbers print as their `Display` (with `arbitrary_precision`, the digits as
//! parsed), object members in the map's own order. The tests hold both to serde_json.

use serde_json::Value;

/// Appends the compact JSON text of `v` to `out`.
pub fn write(out: &mut String, v: &Value) {
    write_members::<false>(out, v);
}

/// Appends the compact JSON text of `v` to `out` with every object's keys sorted, whatever
/// the map's own order (serde_json's `preserve_order`): the canonical form a digest hashes.
pub fn write_sorted(out: &mut String, v: &Value) {
    write_members::<true>(out, v);
}

/// [`write`] and [`write_sorted`]: object members in the map's order, or by key if `SORTED`.
fn write_members<const SORTED: bool>(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            use std::fmt::Write;
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_members::<SORTED>(out, item);
            }
            out.push(']');
        }
        Value::Object(map) if SORTED => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            crate::order::sort_by(&mut members, |a, b| a.0.cmp(b.0));
            write_object::<SORTED>(out, members.into_iter());
        }
        Value::Object(map) => write_object::<SORTED>(out, map.iter()),
    }
}

/// The `{…}` of an object whose members come in the order given.
fn write_object<'v, const SORTED: bool>(
    out: &mut String,
    members: impl Iterator<Item = (&'v String, &'v Value)>,
) {
    out.push('{');
    for (i, (k, item)) in members.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, k);
        out.push(':');
        write_members::<SORTED>(out, item);
    }
    out.push('}');
}

#[cfg(test)]
/// The compact JSON text of `v`.
pub fn to_string(v: &Value) -> String {
    let mut out = String::with_capacity(256);
    write(&mut out, v);
    out
}

/// The length in bytes of the compact JSON text of `v`.
pub fn len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => number_len(n),
        Value::String(s) => str_len(s),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(len).sum::<usize>()
        }
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(k, v)| str_len(k) + 1 + len(v))
                    .sum::<usize>()
        }
    }
}

fn number_len(n: &serde_json::Number) -> usize {
    struct Count(usize);
    impl std::fmt::Write for Count {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = std::fmt::Write::write_fmt(&mut c, format_args!("{n}"));
    c.0
}

/// What a byte becomes inside a JSON string: 0 when it stays as it is, `u` for `\u00xx`,
/// else the letter after the backslash.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// True when one of the eight bytes of `w` needs an escape: below 0x20, `"` or `\`. (The
/// classic zero-byte tests: exact for "any byte", not for which.)
#[inline(always)]
fn needs_escape(w: u64) -> bool {
    let below_space = w.wrapping_sub(LO * 0x20) & !w;
    let q = w ^ (LO * u64::from(b'"'));
    let quote = q.wrapping_sub(LO) & !q;
    let b = w ^ (LO * u64::from(b'\\'));
    let backslash = b.wrapping_sub(LO) & !b;
    (below_space | quote | backslash) & HI != 0
}

/// The index of the first byte at or after `from` that needs an escape (`bytes.len()` when
/// none does).
#[inline]
fn next_escape(bytes: &[u8], mut from: usize) -> usize {
    while from + 8 <= bytes.len() {
        let word: [u8; 8] = bytes[from..from + 8].try_into().unwrap_or_default();
        if needs_escape(u64::from_le_bytes(word)) {
            break;
        }
        from += 8;
    }
    while from < bytes.len() && ESCAPE[usize::from(bytes[from])] == 0 {
        from += 1;
    }
    from
}

/// Appends `s` as a JSON string (quotes included).
pub fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    loop {
        let at = next_escape(bytes, start);
        // `at` is an ASCII byte or the end, so both ends of the run are char boundaries.
        out.push_str(&s[start..at]);
        if at == bytes.len() {
            break;
        }
        let b = bytes[at];
        out.push('\\');
        match ESCAPE[usize::from(b)] {
            b'u' => {
                out.push_str("u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xF)]));
            }
            e => out.push(char::from(e)),
        }
        start = at + 1;
    }
    out.push('"');
}

/// The length of `s` written as a JSON string (quotes included).
pub fn str_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut n = s.len() + 2;
    let mut at = next_escape(bytes, 0);
    while at < bytes.len() {
        n += if ESCAPE[usize::from(bytes[at])] == b'u' {
            5
        } else {
            1
        };
        at = next_escape(bytes, at + 1);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorted_text_sorts_keys_at_every_depth() {
        let v = json!({"z": "a\"\n\u{1}é", "a": [1, 2.5, null, {"y": true, "b": "x"}]});
        let mut out = String::new();
        write_sorted(&mut out, &v);
        assert_eq!(
            out,
            r#"{"a":[1,2.5,null,{"b":"x","y":true}],"z":"a\"\n\u0001é"}"#
        );
    }

    fn same(v: &Value) {
        let want = serde_json::to_string(v).unwrap();
        assert_eq!(to_string(v), want);
        assert_eq!(len(v), want.len(), "{want}");
    }

    #[test]
    fn writes_what_serde_json_writes() {
        same(&json!(null));
        same(&json!(true));
        same(&json!(false));
        same(&json!({}));
        same(&json!([]));
        same(&json!([
            1,
            -2,
            3.5,
            1e300,
            18446744073709551615u64,
            -9223372036854775808i64,
            0.1
        ]));
        same(&json!({"b": [1, {"z": null, "a": "x"}], "a": "", "é": "ü\u{2028}\u{7f}"}));
        let n: Value =
            serde_json::from_str("[1.0e5, 123456789012345678901234567890, -0, 2.50]").unwrap();
        same(&n);
        // Every byte below 0x80, alone, at every offset of a word and next to others.
        let all: String = (0u8..0x80).map(char::from).collect();
        same(&json!(all));
        for c in 0u8..0x80 {
            for pad in 0..17 {
                let s = format!(
                    "{}{}{}",
                    "a".repeat(pad),
                    char::from(c),
                    "é".repeat(pad % 5)
                );
                same(&json!({ s.clone(): s }));
            }
        }
        same(&json!(
            "line one\nline \"two\"\t\\ end\r\n```rust\nfn x() {}\n```\n"
        ));
    }

    #[test]
    fn random_strings_match_serde_json() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet = [
            'a', 'Z', ' ', '\n', '"', '\\', '\u{1}', '\u{1f}', '\t', 'é', '€', '😀', '/',
        ];
        for _ in 0..2000 {
            let n = (next() % 40) as usize;
            let s: String = (0..n)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            same(&json!([s, {"k": s}]));
        }
    }
}
