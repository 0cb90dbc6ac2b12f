//! Spring AMQP exchanges as event endpoints: a queue bound to an exchange
//! (`BindingBuilder.bind(queue).to(exchange)…`, `new Binding(queue, DestinationType.QUEUE,
//! exchange, key, args)`, `@RabbitListener(bindings = @QueueBinding(exchange = @Exchange("x")
//! …))`) consumes the exchange; `RabbitTemplate.convertAndSend(exchange, key, msg)` produces
//! to it (read in `kafka.rs`). An exchange passed as a bean (`.to(exchange)`) is named by the
//! exchange the file declares: `new TopicExchange(NAME)` (or `ExchangeBuilder.topicExchange(
//! NAME)`) assigned to that variable or returned by that `@Bean` method, else the only one the
//! file declares. The default exchange (`""`) is no endpoint.

use super::super::common;
use super::recognize::Ctx;
use super::*;

/// The exchange classes of Spring AMQP a file declares exchanges with.
const EXCHANGE_TYPES: [&str; 5] = [
    "TopicExchange",
    "DirectExchange",
    "FanoutExchange",
    "HeadersExchange",
    "CustomExchange",
];

/// The `ExchangeBuilder` factories.
const EXCHANGE_BUILDERS: [&str; 4] = [
    "topicExchange",
    "directExchange",
    "fanoutExchange",
    "headersExchange",
];

/// An exchange the file declares: the variable or `@Bean` method holding it (if seen) and the
/// token range of its name argument.
#[derive(Debug, Clone, Copy)]
pub(super) struct Declared<'a> {
    holder: Option<&'a str>,
    name: (usize, usize),
}

impl<'s, 'a> Ctx<'s, 'a> {
    /// The exchanges the file declares, in source order (bounded: one linear pass).
    pub(super) fn declared_exchanges(&self) -> Vec<Declared<'a>> {
        let src = self.src;
        let mut out = Vec::new();
        for k in 0..src.len() {
            let Some(id) = src.ident(k) else {
                continue;
            };
            // `new TopicExchange(…)`, Kotlin/Scala `TopicExchange(…)`,
            // `ExchangeBuilder.topicExchange(…)`.
            let (start, open) = if EXCHANGE_TYPES.contains(&id) && src.is(k + 1, "(") {
                let new = k > 0 && src.kw(k - 1, "new");
                if !new && (src.dialect == Dialect::Java || (k > 0 && src.is(k - 1, "."))) {
                    continue;
                }
                (if new { k - 1 } else { k }, k + 1)
            } else if EXCHANGE_BUILDERS.contains(&id)
                && k >= 2
                && src.is(k - 1, ".")
                && src.kw(k - 2, "ExchangeBuilder")
                && src.is(k + 1, "(")
            {
                (k - 2, k + 1)
            } else {
                continue;
            };
            let Some(name) = src.first_arg(open) else {
                continue;
            };
            out.push(Declared {
                holder: self.holder_of(start),
                name,
            });
        }
        out
    }

    /// What holds the expression starting at token `k`: the variable it is assigned to, or the
    /// method that returns it (`return new X(…)`, Kotlin `fun x() = X(…)`).
    fn holder_of(&self, k: usize) -> Option<&'a str> {
        let src = self.src;
        if k == 0 {
            return None;
        }
        if src.is(k - 1, "=") {
            // `fun exchange() = TopicExchange(…)`, `fun exchange(): TopicExchange = …`.
            let mut j = k - 1;
            if j >= 2 && src.ident(j - 1).is_some() && src.is(j - 2, ":") {
                j -= 2;
            }
            if j >= 1 && src.is(j - 1, ")") {
                let open = src.open_of(j - 1)?;
                return open.checked_sub(1).and_then(|m| src.ident(m));
            }
            return self.assigned_var(k);
        }
        if !src.kw(k - 1, "return") {
            return None;
        }
        // The method whose body holds the `return`: the nearest `name(…) {` before it, with
        // at most a `throws` clause or a Kotlin return type between `)` and `{`.
        let mut j = k - 1;
        for _ in 0..256 {
            j = j.checked_sub(1)?;
            if !src.is(j, "{") {
                continue;
            }
            let mut c = j;
            for _ in 0..8 {
                c = c.checked_sub(1)?;
                if src.is(c, ")") {
                    let open = src.open_of(c)?;
                    return open.checked_sub(1).and_then(|m| src.ident(m));
                }
                if src.ident(c).is_none() && !src.is(c, ":") && !src.is(c, ".") && !src.is(c, ",") {
                    break;
                }
            }
        }
        None
    }

    /// The exchange object the expression `a..b` of `.to(…)` is: an exchange constructed
    /// there, a declared exchange's variable or `@Bean` method (`exchange`, `exchange()`,
    /// `this.exchange`), else (a bean injected by type) the only exchange the file declares.
    fn exchange_object(&self, (a, b): (usize, usize), declared: &[Declared<'a>]) -> Option<Value> {
        let src = self.src;
        if b <= a {
            return None;
        }
        let mut s = a;
        if src.kw(s, "new") {
            s += 1;
        }
        if src.ident(s).is_some_and(|id| EXCHANGE_TYPES.contains(&id))
            && src.is(s + 1, "(")
            && src.close_or_end(s + 1) + 1 == b
        {
            return self.topic(src.first_arg(s + 1)?);
        }
        let mut s = a;
        if src.kw(s, "this") && src.is(s + 1, ".") {
            s += 2;
        }
        let e = if b >= s + 3 && src.is(b - 1, ")") && src.is(b - 2, "(") {
            b - 2
        } else {
            b
        };
        let id = src.ident(s).filter(|_| e == s + 1)?;
        match declared.iter().find(|d| d.holder == Some(id)) {
            Some(d) => self.topic(d.name),
            None => match declared {
                [only] => self.topic(only.name),
                _ => None,
            },
        }
    }

    /// `BindingBuilder.bind(queue).to(exchange)` with `to` at token `k`: the binder consumes
    /// the exchange.
    pub(super) fn binding_builder(
        &self,
        k: usize,
        declared: &mut Option<Vec<Declared<'a>>>,
        facts: &mut FileFacts,
    ) {
        let src = self.src;
        // `… .bind( queue ) . to (`
        if !(k >= 2 && src.is(k - 1, ".") && src.is(k - 2, ")") && src.is(k + 1, "(")) {
            return;
        }
        let Some(open) = src.open_of(k - 2) else {
            return;
        };
        if !(open >= 3
            && src.kw(open - 1, "bind")
            && src.is(open - 2, ".")
            && src.kw(open - 3, "BindingBuilder"))
        {
            return;
        }
        let Some(arg) = src.first_arg(k + 1) else {
            return;
        };
        let declared = declared.get_or_insert_with(|| self.declared_exchanges());
        if let Some(ex) = self.exchange_object(arg, declared) {
            common::push_exchange(facts, EventRole::Consumer, ex, src.toks[k].line);
        }
    }

    /// `new Binding(queue, DestinationType.QUEUE, exchange, key, args)` at token `k`
    /// (`Binding`): the binder consumes the exchange.
    pub(super) fn binding_ctor(&self, k: usize, facts: &mut FileFacts) {
        let src = self.src;
        if !src.is(k + 1, "(") || (k > 0 && src.is(k - 1, ".")) {
            return;
        }
        let args = src.split_commas(k + 2, src.close_or_end(k + 1));
        let [_, dest, ex, ..] = args.as_slice() else {
            return;
        };
        // Only a binding of a queue (an exchange-to-exchange binding names no consumer).
        let queue = (dest.0..dest.1).any(|j| src.kw(j, "QUEUE"));
        if !queue || args.len() < 4 {
            return;
        }
        if let Some(v) = self.topic(*ex) {
            common::push_exchange(facts, EventRole::Consumer, v, src.toks[k].line);
        }
    }

    /// The `@Exchange("x")` (Kotlin `Exchange("x")`) of each `@QueueBinding` in the arguments
    /// `args` of a `@RabbitListener` on line `line`: the listener consumes the exchange.
    pub(super) fn listener_exchanges(
        &self,
        (a, b): (usize, usize),
        line: u32,
        facts: &mut FileFacts,
    ) {
        let src = self.src;
        for j in a..b.min(src.len()) {
            if !(src.kw(j, "Exchange") && src.is(j + 1, "(")) || (j > 0 && src.is(j - 1, ".")) {
                continue;
            }
            let close = src.close_or_end(j + 1);
            let ann = Ann {
                name: "Exchange",
                line,
                at: j,
                args: Some((j + 2, close)),
                end: close + 1,
            };
            if let Some(r) = ann_attr(src, &ann, &["value", "name"])
                && let Some(ex) = self.topic(r)
            {
                common::push_exchange(facts, EventRole::Consumer, ex, line);
            }
        }
    }
}
