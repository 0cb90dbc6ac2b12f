//! Event producers and consumers read at calls (pass 3): a NestJS client's `emit`/`send`, and
//! kafkajs `send`, `sendBatch` and `subscribe` with their topic objects.

use super::Ex;
use crate::index::facts::{EventFact, EventRole, Value};
use crate::index::lang::common;

impl<'t> Ex<'t, '_, '_> {
    /// `this.client.emit('topic', data)` / `.send('topic', data)` on a NestJS client.
    pub(super) fn nest_emit(&mut self, p: usize, via: &str) {
        let t = self.t;
        let Some(&(a, e)) = t.args(p).first() else {
            return;
        };
        if t.is(a, "{") {
            return;
        }
        if let Some(topic) = self.topic_expr(a, e) {
            let line = self.line(p);
            common::push_event(&mut self.facts, EventRole::Producer, topic, via, line);
        }
    }

    /// kafkajs `producer.send({ topic, messages })`, `sendBatch({ topicMessages: [{ topic }] })`,
    /// `consumer.subscribe({ topic })` / `({ topics: [a, b] })`.
    pub(super) fn kafka_topics(&mut self, p: usize, role: EventRole) {
        let t = self.t;
        let Some(&(a, _)) = t.args(p).first() else {
            return;
        };
        if !t.is(a, "{") {
            return;
        }
        // The object's own entries, and the objects of a `topicMessages: [...]` array: depth-0
        // entries only, so nested calls never rescan each other's arguments.
        let mut objects = vec![a];
        while let Some(o) = objects.pop() {
            for (x, y) in t.args(o) {
                let key = t.ident(x).or_else(|| t.str_lit(x).map(|s| s.raw));
                let mut found: Vec<(Value, u32)> = Vec::new();
                match key {
                    Some("topic" | "topics") if t.is(x + 1, ":") => {
                        let v = x + 2;
                        if t.is(v, "[") {
                            for (ex, ey) in t.args(v) {
                                if let Some(te) = self.topic_expr(ex, ey) {
                                    found.push((te, self.line(ex)));
                                }
                            }
                        } else if let Some(te) = self.topic_expr(v, y) {
                            found.push((te, self.line(x)));
                        }
                    }
                    // Shorthand `{ topic }`: only a reference worth recording.
                    Some("topic") if y == x + 1 => {
                        if let Some(te) = self.topic_expr(x, y) {
                            found.push((te, self.line(x)));
                        }
                    }
                    Some("topicMessages") if t.is(x + 1, ":") && t.is(x + 2, "[") => {
                        for (ex, _) in t.args(x + 2) {
                            if t.is(ex, "{") && objects.len() < 64 {
                                objects.push(ex);
                            }
                        }
                    }
                    _ => {}
                }
                for (topic, line) in found {
                    self.facts.events.push(EventFact {
                        role,
                        topic,
                        via: "kafkajs".to_string(),
                        line,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use crate::index::facts::{EventRole, Part};

    #[test]
    fn kafkajs_producers_and_consumers() {
        let src = r#"import { ORDERS_TOPIC } from './topics';
const kafka = new Kafka({ clientId: 'x', brokers: [] });
const producer = kafka.producer();
const sink = kafka.producer({ idempotent: true });
const consumer = kafka.consumer({ groupId: 'g' });
await consumer.subscribe({ topics: ['orders.created', ORDERS_TOPIC], fromBeginning: true });
await consumer.subscribe({ topic: process.env.PAY_TOPIC || 'payments' });
await consumer.subscribe({ topic: /orders\..*/ });
await producer.send({
  topic: 'orders.shipped',
  messages: [{ value: 'x' }],
});
await sink.sendBatch({ topicMessages: [{ topic: Topics.A, messages }, { topic: `t.${x}`, messages }] });
await this.kafkaProducer.send({ topic, messages });
await producer.send({ topic: someLocal, messages });
await mailer.send({ topic: 'not.kafka' });
"#;
        let f = extract("src/kafka.ts", src);
        assert_eq!(
            events(&f),
            vec![
                (
                    EventRole::Consumer,
                    lit("orders.created"),
                    "kafkajs".into(),
                    6
                ),
                (
                    EventRole::Consumer,
                    reference("ORDERS_TOPIC"),
                    "kafkajs".into(),
                    6
                ),
                (
                    EventRole::Consumer,
                    Value::env("PAY_TOPIC", Some("payments".into())),
                    "kafkajs".into(),
                    7
                ),
                // A pattern subscription: a site whose topic is not a name.
                (EventRole::Consumer, Value::dynamic(), "kafkajs".into(), 8),
                (
                    EventRole::Producer,
                    lit("orders.shipped"),
                    "kafkajs".into(),
                    10
                ),
                // Names the file cannot resolve are kept: the graph resolves them or lists
                // the site as unresolved, with why.
                (
                    EventRole::Producer,
                    Value {
                        parts: vec![
                            Part::Lit("t.".into()),
                            Part::Ref {
                                name: "x".into(),
                                default: None
                            }
                        ]
                    },
                    "kafkajs".into(),
                    13
                ),
                (
                    EventRole::Producer,
                    reference("Topics.A"),
                    "kafkajs".into(),
                    13
                ),
                (
                    EventRole::Producer,
                    reference("topic"),
                    "kafkajs".into(),
                    14
                ),
                (
                    EventRole::Producer,
                    reference("someLocal"),
                    "kafkajs".into(),
                    15
                ),
            ]
        );
    }
}
