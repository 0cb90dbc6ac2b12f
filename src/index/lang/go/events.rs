//! Kafka (sarama, kafka-go, confluent-kafka-go, franz-go) and AMQP events, and the topics,
//! URLs and route paths read by the shared evaluator.

use super::*;

impl<'t, 'a> Go<'t, '_, 'a> {
    pub(super) fn push_event(&mut self, role: EventRole, topic: Value, via: &str, line: u32) {
        common::push_event(&mut self.facts, role, topic, via, line);
    }

    /// Kafka message/config composite literals: `sarama.ProducerMessage{Topic: …}`,
    /// `kafka.WriterConfig{Topic: …}`, `kafka.ReaderConfig{Topic|GroupTopics: …}`,
    /// `kafka.Message{Topic: …}`, `kafka.TopicPartition{Topic: &t}`, `kgo.Record{Topic: …}`.
    pub(super) fn composite_event(&mut self, k: usize, id: &str) {
        let t = self.t;
        let qualified_by = |pkg: &str| k >= 2 && t.is_punct(k - 1, b'.') && t.is(k - 2, pkg);
        let (role, via) = match id {
            "ProducerMessage" => (EventRole::Producer, "sarama"),
            "WriterConfig" | "Writer" if qualified_by("kafka") => (EventRole::Producer, "kafka-go"),
            "Message" if qualified_by("kafka") => (EventRole::Producer, "kafka-go"),
            "ReaderConfig" if qualified_by("kafka") => (EventRole::Consumer, "kafka-go"),
            "TopicPartition" => (EventRole::Producer, "confluent-kafka"),
            "Record" if qualified_by("kgo") => (EventRole::Producer, "franz-go"),
            "SendMessageInput" | "SendMessageBatchInput" if qualified_by("sqs") => {
                (EventRole::Producer, "SQS")
            }
            "ReceiveMessageInput" if qualified_by("sqs") => (EventRole::Consumer, "SQS"),
            "PublishInput" | "PublishBatchInput" if qualified_by("sns") => {
                (EventRole::Producer, "SNS")
            }
            _ => return,
        };
        let open = k + 1;
        if via == "SQS" || via == "SNS" {
            // AWS SDK v2 inputs: `sqs.SendMessageInput{QueueUrl: aws.String(url)}`,
            // `sns.PublishInput{TopicArn: &arn}`; the address names the queue or topic.
            for (a, b) in t.args(open) {
                if !(t.is(a, "QueueUrl") || t.is(a, "TopicArn") || t.is(a, "TargetArn"))
                    || !t.is_punct(a + 1, b':')
                    || b <= a + 2
                {
                    continue;
                }
                let mut r = (a + 2, b);
                if t.is_punct(r.0, b'&') {
                    r.0 += 1;
                }
                // `aws.String(x)`: the pointer helper around the value.
                if r.1 >= r.0 + 4
                    && t.is(r.0, "aws")
                    && t.is_punct(r.0 + 1, b'.')
                    && t.is(r.0 + 2, "String")
                    && t.is_punct(r.0 + 3, b'(')
                    && t.is_punct(r.1 - 1, b')')
                {
                    r = (r.0 + 4, r.1 - 1);
                }
                if r.0 < r.1
                    && let Some(topic) = common::topic_of(common::aws_destination(self.value(r)))
                {
                    self.push_event(role, topic, via, t.line(a + 2));
                }
            }
            return;
        }
        for (a, b) in t.args(open) {
            if !t.is_punct(a + 1, b':') || b <= a + 2 {
                continue;
            }
            if t.is(a, "Topic") {
                if let Some(topic) = self.topic_expr((a + 2, b)) {
                    self.push_event(role, topic, via, t.line(a + 2));
                }
            } else if t.is(a, "GroupTopics") {
                for (topic, line) in self.topic_list((a + 2, b), k) {
                    self.push_event(role, topic, via, line);
                }
            }
        }
    }

    /// Kafka calls naming topics: sarama `ConsumePartition("t", …)` and consumer-group
    /// `Consume(ctx, []string{…}, h)`, confluent `SubscribeTopics([]string{…}, nil)` and
    /// `Subscribe("t", nil)`, franz-go `kgo.ConsumeTopics("a", "b")`; AMQP `Publish`,
    /// `PublishWithContext` and `Consume` on a channel.
    pub(super) fn call_event(&mut self, k: usize, id: &str) {
        let t = self.t;
        let method = k > 0 && t.is_punct(k - 1, b'.');
        if method
            && k >= 2
            && !(self.libs.amqp && matches!(id, "Publish" | "Consume"))
            && let Some(recv) = t.ident(k - 2)
            && let Some(lib) = common::PubSub::for_receiver(self.libs.pubsub, recv)
            && let Some((role, stream)) = common::pubsub_method(lib, id)
        {
            return self.pubsub_event(k, lib, role, stream);
        }
        if !matches!(
            id,
            "ConsumePartition"
                | "Consume"
                | "SubscribeTopics"
                | "Subscribe"
                | "ConsumeTopics"
                | "Publish"
                | "PublishWithContext"
                | "PublishWithDeferredConfirm"
                | "PublishWithDeferredConfirmWithContext"
                | "ConsumeWithContext"
                | "QueueDeclare"
                | "QueueBind"
        ) {
            return;
        }
        let args = t.args(k + 1);
        if method && self.libs.amqp && self.amqp_event(k, id, &args) {
            return;
        }
        let (role, via, list_arg) = match id {
            "ConsumePartition" if method => (EventRole::Consumer, "sarama", None),
            "Consume" if method && self.libs.sarama && args.len() == 3 => {
                (EventRole::Consumer, "sarama", Some(1))
            }
            "SubscribeTopics" if method => (EventRole::Consumer, "confluent-kafka", Some(0)),
            "Subscribe" if method && self.libs.confluent => {
                (EventRole::Consumer, "confluent-kafka", None)
            }
            "ConsumeTopics" if k >= 2 && t.is(k - 2, "kgo") => {
                for &r in &args {
                    if let Some(topic) = self.topic_expr(r) {
                        self.push_event(EventRole::Consumer, topic, "franz-go", t.line(r.0));
                    }
                }
                return;
            }
            _ => return,
        };
        match list_arg {
            Some(i) => {
                if let Some(&r) = args.get(i) {
                    for (topic, line) in self.topic_list(r, k) {
                        self.push_event(role, topic, via, line);
                    }
                }
            }
            None => {
                if let Some(&r) = args.first()
                    && let Some(topic) = self.topic_expr(r)
                {
                    self.push_event(role, topic, via, t.line(r.0));
                }
            }
        }
    }

    /// NATS (`nc.Publish(subj, data)`, `nc.Subscribe(subj, h)`, `QueueSubscribe(subj, q, h)`,
    /// JetStream's `js.Publish(ctx, subj, data)`) and go-redis (`rdb.Publish(ctx, ch, msg)`,
    /// `Subscribe(ctx, a, b)`, `PSubscribe`, `XAdd(ctx, &redis.XAddArgs{Stream: s})`,
    /// `XReadGroup(ctx, &redis.XReadGroupArgs{Streams: []string{s, ">"}})`) at the call
    /// named at token `k`. A leading context argument is skipped; a subject held in a
    /// parameter stays a run-time topic, so the graph lists the site as unresolved.
    fn pubsub_event(&mut self, k: usize, lib: common::PubSub, role: EventRole, stream: bool) {
        let t = self.t;
        let mut args = t.args(k + 1);
        let ctx_like = |r: (usize, usize)| {
            let first = t.text(r.0);
            (r.1 == r.0 + 1 && (first == "ctx" || first.ends_with("Ctx")))
                || (t.is(r.0, "context") && t.is_punct(r.0 + 1, b'.'))
        };
        if args.first().is_some_and(|&r| ctx_like(r)) {
            args.remove(0);
        }
        let via = lib.via();
        if stream {
            // The stream key is a field of the arguments struct.
            let Some(&(a, b)) = args.first() else {
                return;
            };
            let open = (a..b).find(|&j| t.is_punct(j, b'{'));
            for (x, y) in open.map(|o| t.args(o)).unwrap_or_default() {
                if !t.is_punct(x + 1, b':') || y <= x + 2 {
                    continue;
                }
                if t.is(x, "Stream") {
                    if let Some(topic) = self.topic_expr((x + 2, y)) {
                        self.push_event(role, topic, via, t.line(x));
                    }
                } else if t.is(x, "Streams") {
                    // `Streams: []string{key…, id…}`: the keys are the first half.
                    let all = self.topic_list((x + 2, y), k);
                    let keys = all.len().div_ceil(2);
                    for (topic, line) in all.into_iter().take(keys) {
                        self.push_event(role, topic, via, line);
                    }
                }
            }
            return;
        }
        // Publish and NATS subscriptions name one subject; a Redis subscription many channels.
        let many = lib == common::PubSub::Redis && role == EventRole::Consumer;
        let take = if many { args.len() } else { 1 };
        for &r in args.iter().take(take) {
            if let Some(topic) = self.topic_expr(r) {
                self.push_event(role, topic, via, t.line(r.0));
            }
        }
    }

    /// AMQP (amqp091-go, streadway/amqp) on a channel: `Publish(exchange, key, mandatory,
    /// immediate, msg)` and `PublishWithContext(ctx, exchange, key, …)` produce to the routing
    /// key and to the exchange; `Consume(queue, consumer, autoAck, exclusive, noLocal, noWait,
    /// args)` consumes the queue; `QueueBind(queue, key, exchange, …)` consumes the exchange.
    /// `QueueDeclare` and `QueueBind` are remembered so `q.Name` reads as the queue's name. Returns false
    /// when the call is not one of these shapes.
    pub(super) fn amqp_event(&mut self, k: usize, id: &str, args: &[(usize, usize)]) -> bool {
        let t = self.t;
        let ctx = usize::from(id.ends_with("WithContext"));
        match id {
            "Publish"
            | "PublishWithContext"
            | "PublishWithDeferredConfirm"
            | "PublishWithDeferredConfirmWithContext"
                if args.len() == 5 + ctx =>
            {
                // The routing key, and the exchange as an endpoint of its own (the default
                // exchange `""` is none: `amqp_name` reads no name from an empty literal).
                if let Some(topic) = self.amqp_name(args[ctx + 1], k) {
                    self.push_event(EventRole::Producer, topic, "amqp", t.line(k));
                }
                if let Some(ex) = self.amqp_name(args[ctx], k) {
                    self.push_event(
                        EventRole::Producer,
                        ex,
                        common::AMQP_EXCHANGE_VIA,
                        t.line(k),
                    );
                }
                true
            }
            "Consume" | "ConsumeWithContext" if args.len() == 7 + ctx => {
                if let Some(topic) = self.amqp_queue(args[ctx], k) {
                    self.push_event(EventRole::Consumer, topic, "amqp", t.line(k));
                }
                true
            }
            "QueueDeclare" if args.len() == 6 => {
                // `q, err := ch.QueueDeclare(…)`: the first name on the left.
                let start = chain_start(t, k);
                let mut j = start;
                if t.is_punct(j.wrapping_sub(1), b'=') {
                    j -= 1;
                    if t.is_punct(j.wrapping_sub(1), b':') {
                        j -= 1;
                    }
                    let mut var = None;
                    while let Some(name) = j.checked_sub(1).and_then(|p| t.ident(p)) {
                        var = Some(name);
                        j -= 1;
                        if !t.is_punct(j.wrapping_sub(1), b',') {
                            break;
                        }
                        j -= 1;
                    }
                    if let Some(var) = var.filter(|v| *v != "_") {
                        self.queues.push(Queue {
                            var,
                            at: k,
                            func: self.enclosing_func(k),
                            name: args[0],
                            bind: None,
                        });
                    }
                }
                true
            }
            "QueueBind" if args.len() == 5 => {
                let (q, key, exchange) = (args[0], args[1], args[2]);
                // The bound queue's consumer receives what is published to the exchange.
                if let Some(ex) = self.topic_expr(exchange) {
                    self.push_event(
                        EventRole::Consumer,
                        ex,
                        common::AMQP_EXCHANGE_VIA,
                        t.line(k),
                    );
                }
                if q.1 == q.0 + 3
                    && t.is_punct(q.0 + 1, b'.')
                    && t.is(q.0 + 2, "Name")
                    && let Some(i) = self.queue_of(t.text(q.0), k)
                    && self.queues[i].bind.is_none()
                {
                    self.queues[i].bind = Some((key, exchange));
                }
                true
            }
            _ => false,
        }
    }

    /// The queue a variable holds at token `at`: the last `QueueDeclare` into it in the same
    /// function.
    pub(super) fn queue_of(&self, var: &str, at: usize) -> Option<usize> {
        let here = self.enclosing_func(at);
        self.queues
            .iter()
            .rposition(|q| q.var == var && q.at < at && q.func == here)
    }

    /// An exchange, routing key or queue argument: `q.Name` of a declared queue is the name it
    /// was declared with; anything else is read as a topic. An empty literal is no name.
    pub(super) fn amqp_name(&self, r: (usize, usize), at: usize) -> Option<Value> {
        match self.queue_name_of(r, at) {
            Some(i) => self.topic_expr(self.queues[i].name),
            None => self.topic_expr(r),
        }
    }

    /// The declared queue whose `.Name` the argument `r` reads (`q.Name`), if it is one.
    fn queue_name_of(&self, r: (usize, usize), at: usize) -> Option<usize> {
        let t = self.t;
        (r.1 == r.0 + 3 && t.is_punct(r.0 + 1, b'.') && t.is(r.0 + 2, "Name"))
            .then(|| self.queue_of(t.text(r.0), at))
            .flatten()
    }

    /// The queue a `Consume` reads: its name, or for a server-named queue
    /// (`QueueDeclare("", …)`) what it is bound to — the binding key, else the exchange — which
    /// is what publishers name.
    pub(super) fn amqp_queue(&self, r: (usize, usize), at: usize) -> Option<Value> {
        if let Some(i) = self.queue_name_of(r, at) {
            let q = self.queues[i];
            if let Some(name) = self.topic_expr(q.name) {
                return Some(name);
            }
            let (key, exchange) = q.bind?;
            return self.topic_expr(key).or_else(|| self.topic_expr(exchange));
        }
        self.topic_expr(r)
    }

    /// The topics of a `[]string{…}` literal, or of a variable assigned one.
    pub(super) fn topic_list(&self, (s, e): (usize, usize), at: usize) -> Vec<(Value, u32)> {
        let t = self.t;
        let mut out = Vec::new();
        let list_at = |s: usize| {
            t.is_punct(s, b'[')
                && t.is_punct(s + 1, b']')
                && t.is(s + 2, "string")
                && t.is_punct(s + 3, b'{')
        };
        let s = if t.is_punct(s, b'&') { s + 1 } else { s };
        let items = if list_at(s) {
            Some(s + 3)
        } else if e == s + 1
            && let Some(name) = t.ident(s)
            && let Some(a) = self.asg.last(name, at)
            && list_at(a.rhs.0)
        {
            Some(a.rhs.0 + 3)
        } else {
            None
        };
        match items {
            Some(open) => {
                for r in t.args(open) {
                    if let Some(topic) = self.topic_expr(r) {
                        out.push((topic, t.line(r.0)));
                    }
                }
            }
            None => {
                if let Some(topic) = self.topic_expr((s, e)) {
                    out.push((topic, t.line(s)));
                }
            }
        }
        out
    }

    /// The value of the expression in `r`, read by the shared evaluator. Go's own fallback
    /// stays here: `cmp.Or(os.Getenv("T"), "d")` is the first non-empty of its arguments, so
    /// an env lookup gains the literal default.
    pub(super) fn value(&self, (s, e): (usize, usize)) -> Value {
        let t = self.t;
        let e = e.min(t.len());
        if s >= e {
            return Value::dynamic();
        }
        if t.kw(s, "cmp")
            && t.is_punct(s + 1, b'.')
            && t.kw(s + 2, "Or")
            && t.is_punct(s + 3, b'(')
            && t.close(s + 3) == Some(e - 1)
        {
            let mut v: Option<Value> = None;
            for r in t.args(s + 3) {
                let next = self.value(r);
                v = Some(match v {
                    None => next,
                    Some(left) => with_fallback(left, &next),
                });
            }
            return v.unwrap_or_else(Value::dynamic);
        }
        eval(t, (s, e), &ExprRules::GO, self.asg)
    }

    /// A topic argument: a literal that looks like a topic name, or whatever the evaluator
    /// reads — an environment lookup with its default, a constant left to the graph
    /// (`ordersTopic`, `config.PaymentsTopic`), a local traced to its value, or a run-time
    /// value (a parameter), kept so the graph lists the site as unresolved.
    pub(super) fn topic_expr(&self, r: (usize, usize)) -> Option<Value> {
        if r.0 >= r.1 {
            return None;
        }
        common::topic_of(self.value(r))
    }

    /// The URL argument of an HTTP call. `sure` when the call is HTTP whatever its argument
    /// (`http.Get`, `http.NewRequest`, resty's `R().Get`); otherwise it must read like a URL,
    /// so `cache.Get(key)` is no request.
    pub(super) fn url(&self, r: (usize, usize), sure: bool) -> Option<Value> {
        if r.0 >= r.1 {
            return None;
        }
        common::url_of(self.value(r), sure)
    }

    /// The text of a route path argument: a literal, or a value made of literals and the
    /// file's own constants and locals (`prefix + "/basket"` with `const prefix = "/api"`).
    pub(super) fn route_text(&self, r: (usize, usize)) -> Option<String> {
        if r.0 >= r.1 {
            return None;
        }
        self.file_text(&self.value(r), 0)
    }

    /// The text of `v` when every name in it is a constant of this file with a text value.
    pub(super) fn file_text(&self, v: &Value, depth: u8) -> Option<String> {
        let mut out = String::new();
        for p in &v.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Ref { name, .. } if depth < 4 => {
                    let b = self.facts.bindings.iter().rev().find(|b| b.name == *name)?;
                    out.push_str(&self.file_text(&b.value, depth + 1)?);
                }
                _ => return None,
            }
        }
        Some(out)
    }
}
