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
    /// NATS (`nc.publish('orders.created', sc.encode(x))`, `nc.subscribe('orders.*')`,
    /// JetStream's `js.publish`) and Redis (ioredis / node-redis `publish(ch, msg)`,
    /// `subscribe(ch…, cb)`, `subscribe([a, b], cb)`, `psubscribe`, `xadd(key, '*', …)`,
    /// `xreadgroup('GROUP', g, c, 'STREAMS', key, '>')`, `xReadGroup(g, c, { key, id })`) at
    /// the call whose `(` is token `p`. The subject or channel is the first argument (a
    /// Redis subscription names more as further literals); an object there is another API.
    pub(super) fn pubsub_call(
        &mut self,
        p: usize,
        lib: common::PubSub,
        role: EventRole,
        stream: bool,
    ) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        let via = lib.via();
        let mut found: Vec<(usize, usize)> = Vec::new();
        if stream && role == EventRole::Consumer {
            // ioredis: the keys after `'STREAMS'`, the first half of what follows it.
            if let Some(i) = args.iter().position(|&(x, _)| {
                t.str_value(x)
                    .is_some_and(|s| s.eq_ignore_ascii_case("streams"))
            }) {
                let rest = &args[i + 1..];
                found.extend(rest.iter().take(rest.len().div_ceil(2)));
            } else {
                // node-redis: `{ key: 's', id: '>' }`, or an array of them, after group and
                // consumer.
                let mut objects: Vec<usize> = Vec::new();
                for &(x, _) in args.iter().skip(2).take(1) {
                    if t.is(x, "{") {
                        objects.push(x);
                    } else if t.is(x, "[") {
                        objects
                            .extend(t.args(x).into_iter().map(|r| r.0).filter(|&o| t.is(o, "{")));
                    }
                }
                for o in objects {
                    for (x, y) in t.args(o) {
                        if t.is(x, "key") && t.is(x + 1, ":") {
                            found.push((x + 2, y));
                        }
                    }
                }
            }
        } else if t.is(a, "[") && lib == common::PubSub::Redis {
            found.extend(t.args(a));
        } else {
            found.push((a, e));
            if lib == common::PubSub::Redis && role == EventRole::Consumer && !stream {
                // ioredis `subscribe('a', 'b', cb)`: the further channels are literals.
                found.extend(
                    args.iter()
                        .skip(1)
                        .filter(|&&(x, y)| y == x + 1 && t.str_lit(x).is_some()),
                );
            }
        }
        for (x, y) in found {
            if let Some(topic) = self.topic_expr(x, y) {
                let line = self.line(x);
                common::push_event(&mut self.facts, role, topic, via, line);
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
    fn nats_and_redis_publish_and_subscribe() {
        use crate::index::lang::test_support::events_shown;
        let src = r#"import { connect, StringCodec } from 'nats';
const nc = await connect({ servers: 'nats:4222' });
const sc = StringCodec();
nc.publish('orders.created', sc.encode(JSON.stringify(o)));
const sub = nc.subscribe('orders.*');
js.publish(SUBJECT, data);
nc.publish(`orders.${kind}`, data);
nc.flush();
"#;
        use EventRole::{Consumer, Producer};
        let s = |x: &str| x.to_string();
        assert_eq!(
            events_shown(&extract("src/bus.ts", src)),
            vec![
                (Producer, s("orders.created"), "nats", 4),
                (Consumer, s("orders.*"), "nats", 5),
                (Producer, s("{SUBJECT}"), "nats", 6),
                // Built from a local at run time: the graph lists the site as unresolved.
                (Producer, s("orders.{kind}"), "nats", 7),
            ]
        );
        let redis = r#"const Redis = require('ioredis');
const pub = new Redis();
pub.publish('orders.created', JSON.stringify(o));
sub.subscribe('orders.created', 'orders.paid', (err, n) => {});
sub.psubscribe('orders.*');
client.subscribe(['a.one', 'a.two'], listener);
pub.xadd('audit', '*', 'k', v);
sub.xreadgroup('GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', 'audit', '>');
client.xReadGroup('g', 'c', { key: 'jobs', id: '>' });
pub.get('orders.created');
"#;
        assert_eq!(
            events_shown(&extract("src/cache.js", redis)),
            vec![
                (Producer, s("orders.created"), "redis", 3),
                (Consumer, s("orders.created"), "redis", 4),
                (Consumer, s("orders.paid"), "redis", 4),
                (Consumer, s("orders.*"), "redis", 5),
                (Consumer, s("a.one"), "redis", 6),
                (Consumer, s("a.two"), "redis", 6),
                (Producer, s("audit"), "redis", 7),
                (Consumer, s("audit"), "redis", 8),
                (Consumer, s("jobs"), "redis", 9),
            ]
        );
    }

    #[test]
    fn publish_on_an_emitter_or_without_a_pubsub_import_is_no_event() {
        // An EventEmitter-style bus in a file that imports no NATS or Redis client.
        let src = "import { EventEmitter } from 'events';\nbus.publish('orders.created', o);\nbus.subscribe('orders.created', h);\n";
        assert!(extract("src/bus.ts", src).events.is_empty());
        // A kafkajs producer keeps its one fact in a file that also imports Redis.
        let kafka = "import Redis from 'ioredis';\nawait producer.send({ topic: 'orders.created', messages });\n";
        assert_eq!(extract("src/k.ts", kafka).events.len(), 1);
    }

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
