//! The file-local table of string constants (`static final String TOPIC = "orders"`,
//! `const val`, Scala `val`) and Spring `${…}` placeholders, so a recogniser can resolve a
//! topic or path written as a name.

use super::*;

/// A Spring property placeholder `${name}` or `${name:default}` (nested defaults followed),
/// as `(name, default)`; `None` for anything else, including text around the placeholder.
pub(super) fn spring_placeholder(s: &str) -> Option<(String, Option<String>)> {
    let inner = s.trim().strip_prefix("${")?.strip_suffix('}')?;
    if inner.contains("${") && inner.split_once(':').is_none_or(|(k, _)| k.contains('$')) {
        return None;
    }
    let (var, default) = match inner.split_once(':') {
        Some((v, d)) => (v, Some(d)),
        None => (inner, None),
    };
    if var.is_empty() || var.contains(['{', '}', ' ', '#']) {
        return None;
    }
    let mut default = default.map(str::to_string);
    // `${a:${b:orders}}`: the innermost literal default wins.
    for _ in 0..8 {
        match default.as_deref().and_then(spring_placeholder) {
            Some((_, d)) => default = d,
            None => break,
        }
    }
    if default
        .as_deref()
        .is_some_and(|d| d.contains("${") || d.contains("#{"))
    {
        default = None;
    }
    Some((var.to_string(), default))
}

/// The value a constant bound to `value` contributes: a placeholder gives its default (or
/// nothing), SpEL gives nothing, anything else itself.
fn const_value(value: &str) -> Option<String> {
    if value.contains("${") {
        return spring_placeholder(value).and_then(|(_, d)| d);
    }
    if value.contains("#{") {
        return None;
    }
    Some(value.to_string())
}

/// The topic a string literal names: a plain topic, or a Spring placeholder as an
/// environment lookup.
pub(super) fn topic_of_literal(s: &str) -> Option<Value> {
    if s.contains("${") {
        return spring_placeholder(s).map(|(var, default)| Value::env(var, default));
    }
    if s.contains("#{") || !looks_like_topic(s) {
        return None;
    }
    Some(Value::lit(s.to_string()))
}

/// The string constants of one file, by qualified name (`Topics.ORDER_CREATED`, `BASE`).
#[derive(Debug, Default)]
pub struct Consts {
    values: HashMap<String, String>,
    /// Bare last segment → qualified name, `None` when several constants share it.
    by_last: HashMap<String, Option<String>>,
}

impl Consts {
    /// Records a constant and the [`Constant`] fact for it (placeholders give their default).
    pub fn record(&mut self, facts: &mut FileFacts, name: String, value: &str, line: u32) {
        let Some(value) = const_value(value) else {
            return;
        };
        let last = name.rsplit('.').next().unwrap_or(&name).to_string();
        self.by_last
            .entry(last)
            .and_modify(|q| {
                if q.as_deref() != Some(name.as_str()) {
                    *q = None;
                }
            })
            .or_insert_with(|| Some(name.clone()));
        self.values.insert(name.clone(), value.clone());
        facts.bindings.push(Binding {
            name,
            value: Value::lit(value),
            line,
        });
    }

    /// The qualified name and value a reference written `written` at a site inside the types
    /// `enclosing` (innermost first) refers to.
    pub fn resolve(&self, written: &str, enclosing: &[&str]) -> Option<(&str, &str)> {
        let get = |k: &str| {
            self.values
                .get_key_value(k)
                .map(|(k, v)| (k.as_str(), v.as_str()))
        };
        if let Some(hit) = get(written) {
            return Some(hit);
        }
        for t in enclosing {
            if let Some(hit) = get(&format!("{t}.{written}")) {
                return Some(hit);
            }
        }
        // `Outer.Topics.X` written, `Topics.X` recorded.
        let mut rest = written;
        while let Some((_, tail)) = rest.split_once('.') {
            if tail.contains('.')
                && let Some(hit) = get(tail)
            {
                return Some(hit);
            }
            rest = tail;
        }
        if !written.contains('.')
            && let Some(Some(q)) = self.by_last.get(written)
        {
            return get(q);
        }
        None
    }

    /// Evaluates a string expression: literals and constants of this file joined by `+`.
    pub fn eval(&self, src: &Src, range: (usize, usize), enclosing: &[&str]) -> Option<String> {
        let v = self.eval_value(src, range, enclosing)?;
        v.as_lit().map(str::to_string)
    }
}

impl Consts {
    /// Like [`Consts::eval`], but a name this file does not bind that reads like a constant
    /// (`ApiPaths.ORDERS`, `BASE_PATH`) becomes a reference for the graph to resolve across
    /// files. `None` when a part is neither (a call, a local variable).
    pub fn eval_value(
        &self,
        src: &Src,
        range: (usize, usize),
        enclosing: &[&str],
    ) -> Option<Value> {
        let mut out = Value::default();
        for (a, b) in src.split_at(range.0, range.1, "+") {
            if b == a + 1
                && let Some(v) = src.plain_str(a)
            {
                out.push(Part::Lit(v.into_owned()));
                continue;
            }
            let path = ident_path(src, (a, b))?;
            if let Some((_, v)) = self.resolve(&path, enclosing) {
                out.push(Part::Lit(v.to_string()));
                continue;
            }
            if !reads_like_constant(&path) {
                return None;
            }
            out.push(Part::Ref {
                name: path,
                default: None,
            });
        }
        Some(out)
    }
}

/// A dotted name that reads like a constant of some type (`Topics.ORDER_CREATED`,
/// `ApiPaths.orders`, `BASE_PATH`), not like a local or a member of a variable.
pub(super) fn reads_like_constant(path: &str) -> bool {
    let mut segs = path.rsplit('.');
    let last = segs.next().unwrap_or("");
    let owner_is_type = segs
        .next()
        .is_some_and(|o| o.starts_with(|c: char| c.is_ascii_uppercase()));
    is_upper_snake(last) || owner_is_type
}

/// `a.b.c` (with an optional leading `this.`) spanning exactly `a..b`, joined with dots.
pub(super) fn ident_path(src: &Src, (a, b): (usize, usize)) -> Option<String> {
    let mut j = a;
    if src.kw(j, "this") && src.is(j + 1, ".") {
        j += 2;
    }
    let mut out = String::new();
    loop {
        out.push_str(src.ident(j)?);
        j += 1;
        if j == b {
            return Some(out);
        }
        if !src.is(j, ".") {
            return None;
        }
        out.push('.');
        j += 1;
    }
}

pub(super) fn is_upper_snake(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(
            spring_placeholder("${app.topic:orders.created}"),
            Some(("app.topic".into(), Some("orders.created".into())))
        );
        assert_eq!(
            spring_placeholder("${app.topic}"),
            Some(("app.topic".into(), None))
        );
        assert_eq!(
            spring_placeholder("${a:${b:orders}}"),
            Some(("a".into(), Some("orders".into())))
        );
        assert_eq!(spring_placeholder("x-${a}"), None);
        assert_eq!(spring_placeholder("#{'${a}'}"), None);
        assert_eq!(const_value("${a:b}").as_deref(), Some("b"));
        assert_eq!(const_value("${a}"), None);
        assert_eq!(const_value("orders").as_deref(), Some("orders"));
    }
}
