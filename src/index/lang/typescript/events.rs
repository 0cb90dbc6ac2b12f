//! Event producers and consumers read at calls (pass 3): a NestJS client's `emit`/`send`, and
//! kafkajs `send`, `sendBatch` and `subscribe` with their topic objects.

use super::Ex;
use crate::index::facts::{EventFact, EventRole, Value};
use crate::index::lang::common;
use crate::index::lang::value::{ExprRules, eval};

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

impl<'t> Ex<'t, '_, '_> {
    /// AWS SQS and SNS at a method call whose `(` is token `p` and name `last`: SDK v3's
    /// `client.send(new SendMessageCommand({ QueueUrl, … }))` (and the batch, receive and
    /// `PublishCommand`s), v2's `sqs.sendMessage({ QueueUrl: url, … })`,
    /// `sns.publish({ TopicArn: arn, … })`. The address names the queue or topic; the
    /// capitalised AWS key is what tells these from other `send`s and `publish`es. True when
    /// the call was one.
    pub(super) fn aws_messaging(&mut self, p: usize, last: &str) -> bool {
        let t = self.t;
        let Some(&(a, _)) = t.args(p).first() else {
            return false;
        };
        let (role, object) = if last == "send" && t.is(a, "new") {
            let (role, via) = match t.ident(a + 1) {
                Some("SendMessageCommand" | "SendMessageBatchCommand") => {
                    (EventRole::Producer, "SQS")
                }
                Some("ReceiveMessageCommand") => (EventRole::Consumer, "SQS"),
                Some("PublishCommand" | "PublishBatchCommand") => (EventRole::Producer, "SNS"),
                _ => return false,
            };
            match t.args(a + 2).first() {
                Some(&(o, _)) if t.is(a + 2, "(") && t.is(o, "{") => (role, o),
                // `new SendMessageCommand(params)`: an SQS send whose queue is elsewhere,
                // kept so the graph lists the site as unresolved.
                _ => {
                    let line = self.line(p);
                    common::push_event(&mut self.facts, role, Value::dynamic(), via, line);
                    return true;
                }
            }
        } else if t.is(a, "{")
            && let Some((role, _, _)) = common::aws_sdk_method(last)
        {
            (role, a)
        } else {
            return false;
        };
        let mut found = false;
        for (x, y) in t.args(object) {
            let via = match t.ident(x).or_else(|| t.str_lit(x).map(|s| s.raw)) {
                Some("QueueUrl") => "SQS",
                Some("TopicArn" | "TargetArn") => "SNS",
                _ => continue,
            };
            found = true;
            // `{ QueueUrl }` names a variable; `{ QueueUrl: expr }` the expression.
            let (v, e) = if t.is(x + 1, ":") { (x + 2, y) } else { (x, y) };
            let value = eval(t, (v, e), &ExprRules::JS, self.asg);
            if let Some(topic) = common::topic_of(common::aws_destination(value)) {
                let line = self.line(x);
                common::push_event(&mut self.facts, role, topic, via, line);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use crate::index::facts::{EventRole, Part};

    #[test]
    fn aws_sqs_and_sns_sdk_v3_and_v2() {
        let src = r#"import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
const sqs = new SQSClient({});
await sqs.send(new SendMessageCommand({
  QueueUrl: process.env.ORDERS_QUEUE_URL || 'https://sqs.us-east-1.amazonaws.com/1/orders',
  MessageBody: JSON.stringify(order),
}));
await sns.send(new PublishCommand({ TopicArn: 'arn:aws:sns:us-east-1:1:order-events', Message: m }));
await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
await sqs.send(new SendMessageCommand(params));
await legacySqs.sendMessage({ QueueUrl: 'http://localhost:4566/000000000000/audit', MessageBody: 'x' }).promise();
await bus.publish({ topic: 'not.aws' });
await mailer.send(new Email({ to: 'a' }));
"#;
        let f = extract("src/aws.ts", src);
        let e = |role, v: Value, via: &str, line| (role, v, via.to_string(), line);
        assert_eq!(
            events(&f),
            vec![
                e(
                    EventRole::Producer,
                    Value::env("ORDERS_QUEUE_URL", Some("orders".into())),
                    "SQS",
                    4
                ),
                e(EventRole::Producer, lit("order-events"), "SNS", 7),
                e(EventRole::Consumer, reference("QueueUrl"), "SQS", 8),
                e(EventRole::Producer, Value::dynamic(), "SQS", 9),
                e(EventRole::Producer, lit("audit"), "SQS", 10),
            ]
        );
    }

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
