//! Events: Spring Kafka / kafka-clients producers and consumers, and the JMS, RabbitMQ and SQS
//! listeners, with the topic each names and the event type it carries.

use super::super::common;
use super::recognize::{Ctx, Held};
use super::*;

/// Appends one event fact.
fn push(facts: &mut FileFacts, role: EventRole, topic: Value, via: &str, line: u32) {
    common::push_event(facts, role, topic, via, line);
}

impl<'s, 'a> Ctx<'s, 'a> {
    /// Events: every annotation and call that names a topic, queue or event, then the
    /// `ApplicationListener` types.
    pub(super) fn kafka(&self, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        // `@SendTo("t")` on a `@KafkaListener` method produces to `t`.
        let mut send_to: HashSet<usize> = HashSet::new();
        for m in &self.model.methods {
            if m.anns.iter().any(|a| a.name == "KafkaListener") {
                send_to.extend(m.anns.iter().filter(|a| a.name == "SendTo").map(|a| a.at));
            }
        }
        let mut in_send: HashSet<usize> = HashSet::new();
        for k in 0..n {
            let t = src.toks[k];
            if t.kind == TokKind::Punct && t.text == "@" {
                self.event_annotation(k, &send_to, facts);
                continue;
            }
            if t.kind != TokKind::Ident {
                continue;
            }
            self.event_call(k, &mut in_send, facts);
        }
        self.application_listeners(facts);
    }

    /// What the annotation at token `k` says: `@KafkaListener` topics, the AMQP / JMS / SQS
    /// listeners' queues, `@EventListener` events, and `@SendTo` on a Kafka listener
    /// (`send_to`: the annotations that are).
    fn event_annotation(&self, k: usize, send_to: &HashSet<usize>, facts: &mut FileFacts) {
        let src = self.src;
        let Some(ann) = parse_ann(src, k) else {
            return;
        };
        match ann.name {
            "KafkaListener" => {
                if let Some(r) = ann_attr(src, &ann, &["topics"]) {
                    for topic in self.topics(r) {
                        push(
                            facts,
                            EventRole::Consumer,
                            topic,
                            "@KafkaListener",
                            ann.line,
                        );
                    }
                }
                // `topicPartitions = [@TopicPartition(topic = "t", …)]`.
                if let Some((a, b)) = ann.args {
                    for j in a..b.min(a + 512) {
                        if !(src.kw(j, "topic") && src.is(j + 1, "=")) {
                            continue;
                        }
                        let mut e = j + 2;
                        while e < b && (src.toks[e].kind != TokKind::Punct || src.is(e, ".")) {
                            e += 1;
                        }
                        if let Some(topic) = self.topic((j + 2, e)) {
                            push(
                                facts,
                                EventRole::Consumer,
                                topic,
                                "@KafkaListener",
                                src.toks[j].line,
                            );
                        }
                    }
                }
            }
            // Spring AMQP / JMS listeners: the queue or destination they consume.
            "RabbitListener" | "JmsListener" | "SqsListener" => {
                let keys: &[&str] = match ann.name {
                    "RabbitListener" => &["queues", "value"],
                    "JmsListener" => &["destination"],
                    _ => &["value", "queueNames"],
                };
                if let Some(r) = ann_attr(src, &ann, keys) {
                    for (a, b) in elements(src, r) {
                        let topic = eval(src, (a, b), self.rules, &self.asg);
                        push(
                            facts,
                            EventRole::Consumer,
                            topic,
                            ann_via(ann.name),
                            ann.line,
                        );
                    }
                }
            }
            // Spring application events: the listener method's first parameter type.
            "EventListener" | "TransactionalEventListener" => {
                if let Some((ev, line)) = self.listener_event(&ann) {
                    push(
                        facts,
                        EventRole::Consumer,
                        Value::lit(ev),
                        "ApplicationEvent",
                        line,
                    );
                }
            }
            "SendTo" if send_to.contains(&k) => {
                if let Some(r) = ann_attr(src, &ann, &["value"]) {
                    for topic in self.topics(r) {
                        push(facts, EventRole::Producer, topic, "@SendTo", ann.line);
                    }
                }
            }
            _ => {}
        }
    }

    /// What the call named at token `k` produces or consumes: `KafkaTemplate.send`, the AMQP /
    /// JMS / STOMP templates, `publishEvent`, `ProducerRecord`, `KafkaHeaders.TOPIC` and
    /// kafka-clients `subscribe` (`in_send`: the records already read as a `send` argument).
    fn event_call(&self, k: usize, in_send: &mut HashSet<usize>, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        let t = src.toks[k];
        match t.text {
            "send" if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") => {
                let Some(recv) = src.ident(k - 2) else {
                    return;
                };
                let is_template = self.held.get(recv) == Some(&Held::KafkaTemplate)
                    || recv.to_ascii_lowercase().contains("kafkatemplate");
                if !is_template {
                    return;
                }
                let Some((a, b)) = src.first_arg(k + 1) else {
                    return;
                };
                // `send(new ProducerRecord<>(…))`, `send(ProducerRecord(…))`.
                let mut pr = a;
                if src.kw(pr, "new") {
                    pr += 1;
                }
                if src.kw(pr, "ProducerRecord") {
                    in_send.insert(pr);
                    if let Some(topic) = self.record_topic(pr) {
                        push(facts, EventRole::Producer, topic, "KafkaTemplate", t.line);
                    }
                    return;
                }
                if let Some(topic) = self.topic((a, b)) {
                    push(facts, EventRole::Producer, topic, "KafkaTemplate", t.line);
                }
            }
            // Spring AMQP / JMS / STOMP templates: `convertAndSend(exchange, key, msg)`
            // names the routing key (or the exchange when the key is empty);
            // `convertAndSend(destination, msg)` the destination.
            "convertAndSend" | "convertSendAndReceive"
                if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") =>
            {
                let args = src.split_commas(k + 2, src.close_or_end(k + 1));
                let recv = src.ident(k - 2).unwrap_or("").to_ascii_lowercase();
                let via = if recv.contains("jms") {
                    "JmsTemplate"
                } else if recv.contains("messaging") || recv.contains("simp") {
                    "SimpMessagingTemplate"
                } else {
                    "RabbitTemplate"
                };
                let topic = match args.as_slice() {
                    [ex, key, _, ..] => {
                        let key_v = eval(src, *key, self.rules, &self.asg);
                        if key_v.as_lit().is_some_and(str::is_empty) {
                            eval(src, *ex, self.rules, &self.asg)
                        } else {
                            key_v
                        }
                    }
                    [dest, _] => eval(src, *dest, self.rules, &self.asg),
                    _ => return,
                };
                push(facts, EventRole::Producer, topic, via, t.line);
            }
            // `publisher.publishEvent(new OrderCreatedEvent(…))`: a Spring application event
            // named by its type.
            "publishEvent" if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") => {
                if let Some((a, b)) = src.first_arg(k + 1)
                    && let Some((ev, line)) = self.constructed_type(a, b, k)
                {
                    push(
                        facts,
                        EventRole::Producer,
                        Value::lit(ev),
                        "ApplicationEvent",
                        line,
                    );
                }
            }
            "ProducerRecord" if !in_send.contains(&k) => {
                if let Some(topic) = self.record_topic(k) {
                    push(facts, EventRole::Producer, topic, "kafka-clients", t.line);
                }
            }
            "KafkaHeaders"
                if src.is(k + 1, ".") && src.kw(k + 2, "TOPIC") && src.is(k + 3, ",") =>
            {
                // `MessageBuilder…setHeader(KafkaHeaders.TOPIC, "t")`.
                let open = (0..k).rev().take(4).find(|&j| src.is(j, "("));
                let end = open.map_or(n, |o| src.close_or_end(o));
                if let Some(&r) = src.split_commas(k + 4, end).first()
                    && let Some(topic) = self.topic(r)
                {
                    push(facts, EventRole::Producer, topic, "KafkaTemplate", t.line);
                }
            }
            "subscribe" | "subscription" if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") => {
                let Some((a, mut b)) = src.first_arg(k + 1) else {
                    return;
                };
                // Scala `List("t").asJava`.
                if b >= a + 3 && src.is(b - 2, ".") && src.kw(b - 1, "asJava") {
                    b -= 2;
                }
                let recv = src.ident(k - 2).unwrap_or("");
                let consumerish = recv.to_ascii_lowercase().contains("consumer");
                if builder_args(src, (a, b)).is_none() && !consumerish {
                    return;
                }
                if src.kw(a, "Pattern") {
                    return;
                }
                for topic in self.topics((a, b)) {
                    push(facts, EventRole::Consumer, topic, "kafka-clients", t.line);
                }
            }
            _ => {}
        }
    }

    /// `class X implements ApplicationListener<OrderCreated>`: X consumes the event.
    fn application_listeners(&self, facts: &mut FileFacts) {
        let src = self.src;
        for ty in &self.model.types {
            if !ty.supers.iter().any(|(_, n)| *n == "ApplicationListener") {
                continue;
            }
            let (a, b) = ty.span;
            let header_end = (a..b.min(a + 96)).find(|&j| src.is(j, "{")).unwrap_or(b);
            if let Some(j) = (a..header_end).find(|&j| src.kw(j, "ApplicationListener"))
                && src.is(j + 1, "<")
                && let Some(ev) = src.ident(j + 2)
            {
                // The line that names the event type (`implements ApplicationListener<X>`).
                push(
                    facts,
                    EventRole::Consumer,
                    Value::lit(ev),
                    "ApplicationEvent",
                    src.line(j),
                );
            }
        }
    }

    /// The type an event argument is built from (`new X(…)`, Kotlin `X(…)`), or of the local
    /// it was assigned to before token `at`, with the line where it is built.
    fn constructed_type(&self, a: usize, b: usize, at: usize) -> Option<(&'a str, u32)> {
        self.constructed_type_in(a, b, at, 0)
    }

    /// [`Ctx::constructed_type`] `depth` assignments away from the call: a chain of locals is
    /// followed a few steps, never round a cycle (`x = y; y = x;`).
    fn constructed_type_in(
        &self,
        a: usize,
        b: usize,
        at: usize,
        depth: u8,
    ) -> Option<(&'a str, u32)> {
        let src = self.src;
        let mut j = a;
        if src.kw(j, "new") {
            j += 1;
        }
        let mut last = None;
        while let Some(id) = src.ident(j) {
            last = Some((id, j));
            if src.is(j + 1, ".") {
                j += 2;
            } else {
                break;
            }
        }
        if let Some((name, k)) = last
            && (src.is(k + 1, "(") || src.is(src.skip_generics(k + 1), "("))
            && name.starts_with(|c: char| c.is_ascii_uppercase())
        {
            return Some((name, src.line(a)));
        }
        if b == a + 1
            && depth < 4
            && let Some(name) = src.ident(a)
            && let Some(asg) = self.asg.last(name, at)
        {
            let (x, y) = asg.rhs;
            if x < y && x != a {
                return self.constructed_type_in(x, y, at, depth + 1);
            }
        }
        None
    }

    /// The event type an `@EventListener` method takes (`classes = X.class` or its first
    /// parameter's type), and the line of the method, which names it.
    fn listener_event(&self, ann: &Ann<'a>) -> Option<(&'a str, u32)> {
        let src = self.src;
        if let Some(r) = ann_attr(src, ann, &["classes", "value"]) {
            let (a, _) = *elements(src, r).first()?;
            return src.ident(a).map(|n| (n, ann.line));
        }
        // The method after the annotation: its `(`, then the first parameter.
        let mut k = ann.at + 1;
        let limit = (k + 64).min(src.len());
        let open = loop {
            if k >= limit {
                return None;
            }
            if src.is(k, "(") && src.ident(k - 1).is_some() && !src.is(k.saturating_sub(2), "@") {
                let name = k - 1;
                if !src.kw(name, ann.name) {
                    break k;
                }
            }
            k = if src.is(k, "(") {
                src.close_or_end(k) + 1
            } else {
                k + 1
            };
        };
        let (a, b) = src.first_arg(open)?;
        // Kotlin `event: OrderCreated`; Java `OrderCreated event` (annotations skipped).
        let ty = if let Some(c) = (a..b).find(|&j| src.is(j, ":")) {
            src.ident(c + 1)?
        } else {
            let idents: Vec<&str> = (a..b)
                .filter(|&j| !src.is(j.saturating_sub(1), "@") && !src.is(j.saturating_sub(1), "."))
                .filter_map(|j| src.ident(j))
                .filter(|w| *w != "final")
                .collect();
            *idents.get(idents.len().checked_sub(2)?)?
        };
        Some((ty, src.line(open.saturating_sub(1))))
    }

    /// The topic of `ProducerRecord(…)` whose name is token `k` (`new ProducerRecord<>(t, …)`,
    /// Kotlin `ProducerRecord<K, V>(t, …)`, Scala `new ProducerRecord[K, V](t, …)`).
    fn record_topic(&self, k: usize) -> Option<Value> {
        let src = self.src;
        let open = src.skip_generics(k + 1);
        if !src.is(open, "(") {
            return None;
        }
        self.topic(src.first_arg(open)?)
    }
}

/// The `via` of a listener annotation.
fn ann_via(name: &str) -> &'static str {
    match name {
        "RabbitListener" => "@RabbitListener",
        "JmsListener" => "@JmsListener",
        _ => "@SqsListener",
    }
}
