//! Events: Spring Kafka / kafka-clients producers and consumers, and the JMS, RabbitMQ and SQS
//! listeners, with the topic each names and the event type it carries.

use super::super::common;
use super::recognize::{Ctx, Held};
use super::*;
use crate::index::facts::FRAMEWORK_EVENT_VIA;

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
        // The exchanges the file declares, read at its first `BindingBuilder` binding.
        let mut declared = None;
        let libs = common::PubSub::imported(&facts.imports);
        for k in 0..n {
            let t = src.toks[k];
            if t.kind == TokKind::Punct && t.text == "@" {
                self.event_annotation(k, &send_to, facts);
                continue;
            }
            if t.kind != TokKind::Ident {
                continue;
            }
            match t.text {
                "to" => self.binding_builder(k, &mut declared, facts),
                "Binding" => self.binding_ctor(k, facts),
                "ChannelTopic" | "PatternTopic" if libs.1 => self.redis_listener_topic(k, facts),
                _ if (libs.0 || libs.1)
                    && k >= 2
                    && src.is(k - 1, ".")
                    && src.is(k + 1, "(")
                    && self.pubsub_call(k, libs, facts) => {}
                _ => self.event_call(k, &mut in_send, facts),
            }
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
            "Bean" => self.function_bean(ann.end, facts),
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
                // `bindings = @QueueBinding(exchange = @Exchange("x"), …)`.
                if ann.name == "RabbitListener"
                    && let Some(args) = ann.args
                {
                    self.listener_exchanges(args, ann.line, facts);
                }
            }
            // Spring application events: the listener method's first parameter type.
            "EventListener" | "TransactionalEventListener" => {
                if let Some((ev, line)) = self.listener_event(&ann) {
                    let via = self.application_event_via(ev, facts);
                    push(facts, EventRole::Consumer, Value::lit(ev), via, line);
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
                self.kafka_template_send(k, in_send, facts);
            }
            // Spring AMQP / JMS / STOMP templates.
            "convertAndSend" | "convertSendAndReceive"
                if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") =>
            {
                self.template_convert_and_send(k, facts);
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
            // `send(` was read above; `send {` is Kotlin's trailing lambda
            // (`sqsTemplate.send { to -> to.queue("q") }`).
            "send"
            | "sendAsync"
            | "sendMany"
            | "sendManyAsync"
            | "receive"
            | "receiveAsync"
            | "receiveMany"
            | "receiveManyAsync"
            | "sendMessage"
            | "sendMessageAsync"
            | "sendMessageBatch"
            | "sendMessageBatchAsync"
            | "receiveMessage"
            | "receiveMessageAsync"
            | "publish"
            | "publishAsync"
            | "publishBatch"
            | "sendNotification"
                if k >= 2 && src.is(k - 1, ".") && (src.is(k + 1, "(") || src.is(k + 1, "{")) =>
            {
                self.aws_call(k, facts);
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

    /// `send(` at token `k` on a `KafkaTemplate` (held, or named like one): the topic of its
    /// first argument, or of the `ProducerRecord` it sends (marked in `in_send`, so the record
    /// is not read twice); on any other receiver, an AWS call.
    fn kafka_template_send(&self, k: usize, in_send: &mut HashSet<usize>, facts: &mut FileFacts) {
        let src = self.src;
        let t = src.toks[k];
        let Some(recv) = src.ident(k - 2) else {
            return;
        };
        let is_template = self.held.get(recv) == Some(&Held::KafkaTemplate)
            || recv.to_ascii_lowercase().contains("kafkatemplate");
        if !is_template {
            if !self.stream_bridge_send(k, facts) {
                self.aws_call(k, facts);
            }
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

    /// Spring AMQP / JMS / STOMP templates at token `k`: `convertAndSend(exchange, key, msg)`
    /// names the routing key (or the exchange when the key is empty);
    /// `convertAndSend(destination, msg)` the destination.
    fn template_convert_and_send(&self, k: usize, facts: &mut FileFacts) {
        let src = self.src;
        let t = src.toks[k];
        let args = src.split_commas(k + 2, src.close_or_end(k + 1));
        let recv = src.ident(k - 2).unwrap_or("").to_ascii_lowercase();
        let redis = common::PubSub::imported(&facts.imports).1;
        let via = if recv.contains("redis") || (redis && !recv.contains("rabbit")) {
            "redis"
        } else if recv.contains("jms") {
            "JmsTemplate"
        } else if recv.contains("sqs") || recv.contains("queuemessaging") {
            "SqsTemplate"
        } else if recv.contains("sns") || recv.contains("notificationmessaging") {
            "SnsTemplate"
        } else if recv.contains("messaging") || recv.contains("simp") {
            "SimpMessagingTemplate"
        } else {
            "RabbitTemplate"
        };
        match args.as_slice() {
            // RabbitTemplate: the routing key, and the exchange as an endpoint of its
            // own (the default exchange `""` is none).
            [ex, key, _, ..] if via == "RabbitTemplate" => {
                let key_v = eval(src, *key, self.rules, &self.asg);
                if !key_v.as_lit().is_some_and(str::is_empty) {
                    push(facts, EventRole::Producer, key_v, via, t.line);
                }
                let ex_v = eval(src, *ex, self.rules, &self.asg);
                common::push_exchange(facts, EventRole::Producer, ex_v, t.line);
            }
            [ex, key, _, ..] => {
                let key_v = eval(src, *key, self.rules, &self.asg);
                let topic = if key_v.as_lit().is_some_and(str::is_empty) {
                    eval(src, *ex, self.rules, &self.asg)
                } else {
                    key_v
                };
                push(facts, EventRole::Producer, topic, via, t.line);
            }
            [dest, _] => {
                let topic = eval(src, *dest, self.rules, &self.asg);
                push(facts, EventRole::Producer, topic, via, t.line);
            }
            _ => {}
        }
    }

    /// AWS messaging at the call named at token `k` (a `.` before it, a `(` after it): Spring
    /// Cloud AWS's `SqsTemplate` (`send(to -> to.queue("q").payload(p))`, `send("q", p)`,
    /// `receive(from -> from.queue("q"))`), the SDK's SQS clients (`sendMessage(
    /// SendMessageRequest.builder().queueUrl(url)…)`, v1's `sendMessage(url, body)`,
    /// `receiveMessage(…)`) and SNS (`publish(PublishRequest.builder().topicArn(arn)…)`,
    /// `publish(arn, message)`, `sendNotification(topic, message, subject)`). The receiver must
    /// be held as one of those types or be named for the service (`sqsClient`, `snsTemplate`):
    /// `publish` and `send` are everyday method names. After the name comes `(`, or `{` for
    /// Kotlin's trailing lambda.
    fn aws_call(&self, k: usize, facts: &mut FileFacts) {
        let src = self.src;
        let Some(recv) = src.ident(k - 2) else {
            return;
        };
        let lower = recv.to_ascii_lowercase();
        let held = match self.held.get(recv) {
            Some(h @ (Held::SqsTemplate | Held::SqsClient | Held::SnsClient)) => *h,
            _ if lower.contains("sqstemplate") || lower.contains("queuemessagingtemplate") => {
                Held::SqsTemplate
            }
            _ if lower.contains("sqs") => Held::SqsClient,
            _ if lower.contains("sns") || lower.contains("notificationmessaging") => {
                Held::SnsClient
            }
            _ => return,
        };
        let method = src.toks[k].text;
        let (role, via, keys): (EventRole, &str, &[&str]) = match (held, method) {
            (Held::SqsTemplate, m) if m.starts_with("send") => {
                (EventRole::Producer, "SqsTemplate", &["queue"])
            }
            (Held::SqsTemplate, m) if m.starts_with("receive") => {
                (EventRole::Consumer, "SqsTemplate", &["queue"])
            }
            (Held::SqsClient, m) if m.starts_with("sendMessage") => {
                (EventRole::Producer, "SQS", &["queueUrl", "withQueueUrl"])
            }
            (Held::SqsClient, m) if m.starts_with("receiveMessage") => {
                (EventRole::Consumer, "SQS", &["queueUrl", "withQueueUrl"])
            }
            (Held::SnsClient, m) if m.starts_with("publish") || m == "sendNotification" => (
                EventRole::Producer,
                "SNS",
                &["topicArn", "withTopicArn", "targetArn", "withTargetArn"],
            ),
            _ => return,
        };
        let close = src.close_or_end(k + 1);
        let args = src.split_commas(k + 2, close);
        // The destination set inside the argument: a builder step or a lambda's
        // (`SendMessageRequest.builder().queueUrl(url)`, `to -> to.queue("q")`).
        let inner = (k + 2..close).find(|&j| {
            j >= 1
                && src.is(j - 1, ".")
                && src.is(j + 1, "(")
                && src.ident(j).is_some_and(|m| keys.contains(&m))
        });
        let range = match inner {
            Some(j) => src.first_arg(j + 1),
            // `new SendMessageRequest(url, body)` (SDK v1).
            None if args.len() == 1 && src.kw(args[0].0, "new") => {
                let open = (args[0].0..args[0].1).find(|&j| src.is(j, "("));
                open.and_then(|o| src.first_arg(o))
            }
            // The destination first: `send("q", payload)`, `sendMessage(url, body)`,
            // `publish(arn, message)`; `receiveMessage(url)` names it alone.
            None if args.len() >= 2 || (role == EventRole::Consumer && args.len() == 1) => {
                let (a, b) = args[0];
                // A lambda or builder that set no destination names none we can read.
                (!(a..b).any(|j| src.is(j, "->") || src.kw(j, "builder"))).then_some((a, b))
            }
            _ => None,
        };
        let Some((a, b)) = range else {
            return;
        };
        let topic = if b == a + 1
            && let Some(lit) = src.lit(a)
            && !lit.templated
        {
            let name = common::aws_destination_name(&lit.value);
            super::consts::topic_of_literal(name)
        } else {
            self.topic((a, b))
        };
        if let Some(topic) = topic {
            push(facts, role, topic, via, src.toks[k].line);
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
                // Its `onApplicationEvent` handles the workspace's own events (the graph
                // moves the consumer there); the framework's lifecycle events keep their mark.
                let via = match self.application_event_via(ev, facts) {
                    FRAMEWORK_EVENT_VIA => FRAMEWORK_EVENT_VIA.to_string(),
                    via => format!("{via}{}{}", crate::index::facts::HANDLED_BY, ty.name),
                };
                push(
                    facts,
                    EventRole::Consumer,
                    Value::lit(ev),
                    &via,
                    src.line(j),
                );
            }
        }
    }

    /// The `via` of a listener of application event type `ev`: the framework's own lifecycle
    /// events (imported from `org.springframework.`, or one of Spring's well-known ones when
    /// the import is a wildcard) are [`FRAMEWORK_EVENT_VIA`], the workspace's `ApplicationEvent`.
    fn application_event_via(&self, ev: &str, facts: &FileFacts) -> &'static str {
        const SPRING_EVENTS: [&str; 16] = [
            "ApplicationContextInitializedEvent",
            "ApplicationEnvironmentPreparedEvent",
            "ApplicationFailedEvent",
            "ApplicationPreparedEvent",
            "ApplicationReadyEvent",
            "ApplicationStartedEvent",
            "ApplicationStartingEvent",
            "AvailabilityChangeEvent",
            "ContextClosedEvent",
            "ContextRefreshedEvent",
            "ContextStartedEvent",
            "ContextStoppedEvent",
            "ReactiveWebServerInitializedEvent",
            "ServletRequestHandledEvent",
            "ServletWebServerInitializedEvent",
            "WebServerInitializedEvent",
        ];
        let imported_from_framework = facts.imports.iter().any(|imp| {
            imp.module.starts_with("org.springframework.")
                && imp.module.rsplit('.').next() == Some(ev)
        });
        if imported_from_framework || SPRING_EVENTS.contains(&ev) {
            FRAMEWORK_EVENT_VIA
        } else {
            "ApplicationEvent"
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

#[cfg(test)]
mod tests {
    use crate::index::facts::{EventRole, Value};
    use crate::index::lang::test_support::events;
    use EventRole::*;

    #[test]
    fn spring_lifecycle_events_are_the_frameworks() {
        let src = r#"package com.acme;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.*;
import org.springframework.security.authentication.event.AuthenticationSuccessEvent;
import com.acme.events.OrderCreated;
public class Listeners implements ApplicationListener<ApplicationReadyEvent> {
    @EventListener
    void refreshed(ContextRefreshedEvent e) {}
    @EventListener
    void login(AuthenticationSuccessEvent e) {}
    @EventListener
    void created(OrderCreated e) {}
}
"#;
        let f = super::super::super::java::extract("Listeners.java", src);
        let fw = crate::index::facts::FRAMEWORK_EVENT_VIA;
        let lit = |s: &str| Value::lit(s);
        assert_eq!(
            events(&f),
            vec![
                (Consumer, lit("ContextRefreshedEvent"), fw, 8),
                (Consumer, lit("AuthenticationSuccessEvent"), fw, 10),
                (Consumer, lit("OrderCreated"), "ApplicationEvent", 12),
                (Consumer, lit("ApplicationReadyEvent"), fw, 6),
            ]
        );
    }
}
