//! The entry point [`recognize`]: the per-file context every recogniser reads ([`Ctx`]) and
//! the bindings pass that fills it (what variables hold, `@Value` properties, literal locals),
//! plus the topic and statement helpers the recognisers share.

use super::consts::{ident_path, reads_like_constant, spring_placeholder, topic_of_literal};
use super::grpc::stub_service;
use super::*;

/// What a variable is known to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held<'a> {
    KafkaTemplate,
    RestTemplate,
    Stub(&'a str),
    /// Spring Cloud AWS's `SqsTemplate` (`send(to -> to.queue("q")…)`).
    SqsTemplate,
    /// An AWS SDK SQS client (`sendMessage`, `receiveMessage`).
    SqsClient,
    /// An AWS SDK SNS client or Spring's SNS template (`publish`, `sendNotification`).
    SnsClient,
}

/// Everything [`recognize`] keeps while scanning one file.
pub(super) struct Ctx<'s, 'a> {
    pub(super) src: &'s Src<'a>,
    pub(super) model: &'s Model<'a>,
    pub(super) consts: &'s Consts,
    /// Simple names imported as `…XGrpc.XBlockingStub` (or `…XImplBase`) → qualifier.
    pub(super) grpc_imports: HashMap<String, String>,
    /// Variables and fields by what they hold.
    pub(super) held: HashMap<&'a str, Held<'a>>,
    /// `@Value("${x:y}")` fields and parameters → (property, default).
    pub(super) value_bound: HashMap<&'a str, (String, Option<String>)>,
    /// Locals and fields bound once to a plain literal (`None` when bound to several).
    pub(super) locals: HashMap<&'a str, Option<Cow<'a, str>>>,
    /// Variables bound once to an expression holding an HTTP path literal
    /// (`String url = base + "/orders/" + id;`) → that expression's token range.
    pub(super) url_vars: HashMap<&'a str, Option<(usize, usize)>>,
    /// Every `name = value` of the file (the shared tracker), for what a name holds.
    pub(super) asg: Assignments,
    /// How this dialect writes expressions, for the shared evaluator.
    pub(super) rules: &'static ExprRules,
}

/// Runs every framework recogniser over a parsed file, appending to `facts`.
pub fn recognize<'a>(src: &Src<'a>, model: &Model<'a>, consts: &Consts, facts: &mut FileFacts) {
    let mut grpc_imports = HashMap::new();
    for imp in &facts.imports {
        let mut segs = imp.module.rsplit('.');
        if let (Some(last), Some(prev)) = (segs.next(), segs.next())
            && (prev.ends_with("Grpc") || prev.ends_with("GrpcKt"))
        {
            grpc_imports.insert(last.to_string(), prev.to_string());
        }
    }
    let mut cx = Ctx {
        src,
        model,
        consts,
        grpc_imports,
        held: HashMap::new(),
        value_bound: HashMap::new(),
        locals: HashMap::new(),
        url_vars: HashMap::new(),
        asg: Assignments::scan(
            src,
            if src.dialect == Dialect::Java {
                &StmtStyle::SEMICOLON
            } else {
                &StmtStyle::NEWLINE
            },
        ),
        rules: match src.dialect {
            Dialect::Java => &ExprRules::JAVA,
            Dialect::Kotlin => &ExprRules::KOTLIN,
            Dialect::Scala => &ExprRules::SCALA,
        },
    };
    cx.scan_bindings(facts);
    cx.grpc(facts);
    cx.kafka(facts);
    cx.http(facts);
    cx.asg.export(src, cx.rules, facts);
}

impl<'s, 'a> Ctx<'s, 'a> {
    /// The var a typed declaration at type token `k` names: Java `Type<…> name`, Kotlin/Scala
    /// `name: Qual.Type`.
    pub(super) fn declared_var(&self, k: usize) -> Option<(usize, &'a str)> {
        let src = self.src;
        // `name: Type` / `name: Qual.Type`.
        let mut q = k;
        while q >= 2 && src.is(q - 1, ".") && src.ident(q - 2).is_some() {
            q -= 2;
        }
        if q >= 2 && src.is(q - 1, ":") && src.dialect != Dialect::Java {
            return src.ident(q - 2).map(|n| (q - 2, n));
        }
        // `Type<…> name` not followed by `(` (that would be a method returning the type).
        let mut j = src.skip_generics(k + 1);
        while src.is(j, "[") && src.is(j + 1, "]") {
            j += 2;
        }
        if src.dialect == Dialect::Java
            && let Some(n) = src.ident(j)
            && !src.is(j + 1, "(")
            && !src.is(j + 1, ".")
            && !matches!(n, "extends" | "implements" | "throws" | "instanceof")
        {
            return Some((j, n));
        }
        None
    }

    /// Finds typed declarations, `@Value` bindings and literal-bound locals in one pass.
    fn scan_bindings(&mut self, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        for k in 0..n {
            let t = src.toks[k];
            if t.kind == TokKind::Punct && t.text == "@" {
                if src.kw(k + 1, "Value") || (src.is(k + 2, ":") && src.kw(k + 3, "Value")) {
                    self.value_annotation(k, facts);
                }
                continue;
            }
            if t.kind == TokKind::Punct && t.text == "=" {
                // `name = "literal"` (a field, local or Kotlin/Scala val).
                let named_arg = k >= 2 && (src.is(k - 2, "(") || src.is(k - 2, ","));
                if !named_arg
                    && let Some(name) = k.checked_sub(1).and_then(|p| src.ident(p))
                    && let Some(v) = src.plain_str(k + 1)
                    && (src.is(k + 2, ";")
                        || src.toks.get(k + 2).is_none_or(|t| t.nl_before)
                        || src.is(k + 2, ")")
                        || src.is(k + 2, "}"))
                {
                    self.locals
                        .entry(name)
                        .and_modify(|old| {
                            if old.as_deref() != Some(&*v) {
                                *old = None;
                            }
                        })
                        .or_insert(Some(v));
                }
                if !named_arg && let Some(name) = k.checked_sub(1).and_then(|p| src.ident(p)) {
                    let end = self.statement_end(k + 1);
                    let has_path = (k + 1..end.min(k + 65)).any(|j| {
                        src.lit(j).is_some_and(|l| {
                            let v = normalize_template(&l.value, l.templated);
                            v.starts_with('/') || v.contains("://") || v.starts_with("{}/")
                        })
                    });
                    if has_path && end > k + 1 {
                        let range = (k + 1, end);
                        self.url_vars
                            .entry(name)
                            .and_modify(|old| {
                                if *old != Some(range) {
                                    *old = None;
                                }
                            })
                            .or_insert(Some(range));
                    }
                }
                continue;
            }
            let Some(ty) = src.ident(k) else { continue };
            let held = match ty {
                "KafkaTemplate" | "ReactiveKafkaProducerTemplate" => Held::KafkaTemplate,
                "RestTemplate" | "TestRestTemplate" => Held::RestTemplate,
                "SqsTemplate"
                | "SqsOperations"
                | "SqsAsyncOperations"
                | "QueueMessagingTemplate" => Held::SqsTemplate,
                "SqsClient"
                | "SqsAsyncClient"
                | "AmazonSQS"
                | "AmazonSQSAsync"
                | "AmazonSQSClient"
                | "AmazonSQSAsyncClient" => Held::SqsClient,
                "SnsClient"
                | "SnsAsyncClient"
                | "AmazonSNS"
                | "AmazonSNSAsync"
                | "AmazonSNSClient"
                | "SnsTemplate"
                | "NotificationMessagingTemplate" => Held::SnsClient,
                _ => {
                    if !ty.ends_with("Stub") {
                        continue;
                    }
                    let qual = if k >= 2 && src.is(k - 1, ".") {
                        src.ident(k - 2)
                    } else {
                        self.grpc_imports.get(ty).map(String::as_str)
                    };
                    match qual.and_then(|q| stub_service(q, ty)) {
                        Some(svc) => Held::Stub(svc),
                        None => continue,
                    }
                }
            };
            if let Some((_, var)) = self.declared_var(k) {
                self.held.entry(var).or_insert(held);
            } else if src.is(src.skip_generics(k + 1), "(") {
                // A construction: `var t = new KafkaTemplate<>(pf)`, `val rest = RestTemplate()`.
                let start = if k >= 1 && src.kw(k - 1, "new") {
                    k - 1
                } else {
                    k
                };
                if let Some(var) = self.assigned_var(start) {
                    self.held.entry(var).or_insert(held);
                }
            }
        }
    }

    /// `@Value("${prop:default}") <decl>`: binds the declared name to the property, and records a
    /// constant for its default.
    fn value_annotation(&mut self, at: usize, facts: &mut FileFacts) {
        let src = self.src;
        let Some(ann) = parse_ann(src, at) else {
            return;
        };
        let Some((a, b)) = ann_attr(src, &ann, &["value"]) else {
            return;
        };
        if b != a + 1 {
            return;
        }
        let Some(v) = src.lit(a) else { return };
        let whole = spring_placeholder(&v.value);
        // `@Value("http://${CART_HOST}/carts")`: placeholders inside a URL or a name, kept
        // whole as the field's binding so `url + "/" + id` resolves to `/carts/{}`.
        let embedded = whole.is_none() && v.value.contains("${") && !v.value.contains("#{");
        if whole.is_none() && !embedded {
            return;
        }
        // The declared name: skip modifiers/annotations; Kotlin `name: T`, Java `T name`.
        let mut j = ann.end;
        let mut last_ident = None;
        let mut steps = 0;
        while j < src.len() && steps < 24 {
            steps += 1;
            if src.is(j, "@") {
                j = parse_ann(src, j).map_or(j + 1, |x| x.end);
                continue;
            }
            let t = src.toks[j];
            if t.kind == TokKind::Punct {
                match t.text {
                    ":" if src.dialect != Dialect::Java => break,
                    "<" => {
                        j = src.skip_generics(j).max(j + 1);
                        continue;
                    }
                    "." | "?" | "[" | "]" => {}
                    _ => break,
                }
            } else if t.kind == TokKind::Ident {
                if matches!(t.text, "fun" | "void" | "def") {
                    return;
                }
                last_ident = Some(t.text);
            } else {
                break;
            }
            j += 1;
        }
        // A setter or method takes the value through its parameter: not a binding we can name.
        if src.is(j, "(") {
            return;
        }
        let Some(name) = last_ident else { return };
        let qualified = |name: &str| match self.model.enclosing(at) {
            Some(t) => format!("{}.{}", self.model.qualifier(t), name),
            None => name.to_string(),
        };
        let Some((var, default)) = whole else {
            facts.bindings.push(Binding {
                name: qualified(name),
                value: crate::index::resolve::parse_placeholders(&v.value),
                line: ann.line,
            });
            return;
        };
        // With a default, the field reads as it (a base URL's default is where it points);
        // without one, as the property, so what another file passes on (`new
        // Provider(queueName)`) names the property instead of an unknown field.
        facts.bindings.push(Binding {
            name: qualified(name),
            value: match &default {
                Some(d) => Value::lit(d.clone()),
                None => Value::env(var.clone(), None),
            },
            line: ann.line,
        });
        self.value_bound.insert(name, (var, default));
    }

    /// The topic an expression names (see the module docs), resolved against this file's
    /// constants so a bare `TOPIC` inside `Producer` becomes `Producer.TOPIC`.
    pub(super) fn topic(&self, (a, b): (usize, usize)) -> Option<Value> {
        if b <= a {
            return None;
        }
        if let Some(v) = self.topic_name(a, b) {
            return Some(v);
        }
        // Any other expression is what the shared evaluator reads: a field or local with an
        // environment default (`System.getenv("T") ?: "t"`,
        // `Optional.ofNullable(getenv("T")).orElse("t")`), or a run-time value kept so the
        // graph lists the site as unresolved.
        if self.src.toks[a].kind == TokKind::Str {
            return None;
        }
        super::super::common::topic_of(eval(self.src, (a, b), self.rules, &self.asg))
    }

    /// [`Self::topic`] for a literal or a name this file's constants, `@Value` fields and
    /// literal locals resolve.
    fn topic_name(&self, a: usize, b: usize) -> Option<Value> {
        let src = self.src;
        if b == a + 1 && src.toks[a].kind == TokKind::Str {
            let lit = src.lit(a)?;
            if lit.templated {
                return None;
            }
            return topic_of_literal(&lit.value);
        }
        // Strip a value accessor: `Topics.ORDER_CREATED.getValue()`, `.value`, `.topic`.
        let mut end = b;
        if end >= a + 3 && src.is(end - 1, ")") && src.is(end - 2, "(") {
            end -= 2;
        }
        if end >= a + 3
            && src.is(end - 2, ".")
            && src.ident(end - 1).is_some_and(|m| {
                matches!(
                    m,
                    "value" | "getValue" | "topic" | "getTopic" | "topicName" | "getTopicName"
                )
            })
        {
            end -= 2;
        } else if end != b {
            return None;
        }
        let path = ident_path(src, (a, end))?;
        if !path.contains('.')
            && let Some((var, default)) = self.value_bound.get(path.as_str())
        {
            return Some(Value::env(var.clone(), default.clone()));
        }
        let enclosing = self.model.enclosing_names(a);
        if let Some((q, _)) = self.consts.resolve(&path, &enclosing) {
            return Some(Value::reference(q.to_string()));
        }
        if !path.contains('.')
            && let Some(Some(v)) = self.locals.get(path.as_str())
        {
            return topic_of_literal(v);
        }
        reads_like_constant(&path).then_some(Value::reference(path))
    }

    pub(super) fn topics(&self, range: (usize, usize)) -> Vec<Value> {
        elements(self.src, range)
            .into_iter()
            .filter_map(|r| self.topic(r))
            .collect()
    }

    /// The variable or field an expression starting at token `k` is assigned to
    /// (`this.stub = …`, `stub = …`, `Type stub = …`, `val stub: T = …`).
    pub(super) fn assigned_var(&self, mut k: usize) -> Option<&'a str> {
        let src = self.src;
        while k >= 2 && src.is(k - 1, ".") && src.ident(k - 2).is_some() {
            k -= 2;
        }
        let eq = k.checked_sub(1)?;
        if !src.is(eq, "=") {
            return None;
        }
        // Kotlin/Scala `val name: Type = …`: the name after `val`/`var` in the statement.
        if src.dialect != Dialect::Java {
            let from = eq.saturating_sub(12);
            for j in (from..eq).rev() {
                if src.kw(j, "val") || src.kw(j, "var") {
                    return src.ident(j + 1);
                }
                if src.toks[j].nl_before {
                    break;
                }
            }
        }
        src.ident(eq.checked_sub(1)?)
    }

    /// The end of the statement or expression starting at token `i` (exclusive), looking at
    /// most 400 tokens ahead. Outside Java a new line ends it unless it starts with `.`/`?.`.
    pub(super) fn statement_end(&self, i: usize) -> usize {
        let src = self.src;
        src.expr_end(i, i + 400, |j| {
            let t = src.toks[j];
            src.dialect != Dialect::Java
                && !(t.kind == TokKind::Punct && matches!(t.text, "." | "?."))
        })
    }
}

/// A literal with Kotlin/Scala substitutions (`$id`, `${id}`) and `String.format` directives as
/// `{}` placeholders.
fn normalize_template(value: &str, templated: bool) -> Cow<'_, str> {
    if !templated && !value.contains('%') {
        return Cow::Borrowed(value);
    }
    let b = value.as_bytes();
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if templated && c == b'$' && b.get(i + 1) == Some(&b'{') {
            // `${…}` up to its closing brace (nested braces counted).
            let mut depth = 0usize;
            let mut j = i + 1;
            while j < b.len() {
                match b[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            out.push_str("{}");
            i = j + 1;
            continue;
        }
        if templated
            && c == b'$'
            && b.get(i + 1)
                .is_some_and(|&x| x.is_ascii_alphabetic() || x == b'_')
        {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            out.push_str("{}");
            i = j;
            continue;
        }
        if c == b'%' && b.get(i + 1).is_some_and(|x| matches!(x, b's' | b'd')) {
            out.push_str("{}");
            i += 2;
            continue;
        }
        // Copy one UTF-8 character.
        let end = (i + crate::index::lex::utf8_len(c)).min(b.len());
        out.push_str(value.get(i..end).unwrap_or(""));
        i = end;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_become_placeholders() {
        assert_eq!(
            normalize_template("$base/orders/${id}", true),
            "{}/orders/{}"
        );
        assert_eq!(normalize_template("%s/orders/%d", false), "{}/orders/{}");
    }
}
