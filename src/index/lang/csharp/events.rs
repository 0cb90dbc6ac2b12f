//! Typed event buses: a publish or subscribe call whose topic is the event type's name
//! (`PublishAsync(new OrderPaid(…))`, `AddSubscription<OrderPaid, H>()`), and how the event
//! type is found from the argument.

use super::*;

/// How many assignments back a variable is followed.
const MAX_DEPTH: u8 = 4;
/// How many earlier assignments of one variable count (the branches that set it).
const MAX_ASSIGNMENTS: usize = 8;
/// How many events one argument may stand for (a variable set in many branches): more is
/// noise, and the bound keeps each lookup small.
const MAX_FOUND: usize = 32;

/// What the typed event-bus pass keeps between calls, so that each call costs about the
/// size of its own argument: the assignments by name (instead of a scan of every assignment
/// of the file per call), the events seen (instead of a scan of every event recorded so far)
/// and, within one call, what each variable was found to hold (a variable set in 8 branches
/// from variables each set in 8 branches is looked at once per depth, not 8^depth times).
/// Assignments by name: name → (name token, right-hand side), in source order.
type ByName<'t> = HashMap<&'t str, Vec<(usize, (usize, usize))>>;

#[derive(Default)]
pub(super) struct TypedEvents<'t> {
    /// Assignments by name: (name token, right-hand side), in source order. Built on first
    /// use.
    by_name: Option<ByName<'t>>,
    /// (line, role, topic) of every event in `facts.events[..scanned]`.
    seen: HashSet<(u32, EventRole, String)>,
    scanned: usize,
    /// The name token of every assignment, sorted: which assignments come before a call.
    ats: Vec<usize>,
    /// (variable, depth) → the events it may hold, valid for the calls that see the same
    /// assignments before them (`memo_for`: how many there are), which is every call between
    /// two assignments.
    memo: HashMap<(&'t str, u8), Vec<(&'t str, usize)>>,
    memo_for: Option<usize>,
}

impl<'t> Ex<'t, '_, '_> {
    /// AWS SQS and SNS at the call `last(…)` whose `(` is token `p`:
    /// `SendMessageAsync(new SendMessageRequest { QueueUrl = url, … })` (or its
    /// constructor form `new SendMessageRequest(url, body)`), `SendMessageAsync(url, body)`
    /// on a receiver named for SQS, `ReceiveMessageAsync(…)`, and
    /// `PublishAsync(new PublishRequest { TopicArn = arn, … })` / `PublishAsync(arn, msg)`.
    /// The address names the queue or topic. Read before the typed event bus, whose
    /// `PublishAsync(new X(…))` would otherwise take the request type for an event. True
    /// when the call was one.
    pub(super) fn aws_messaging(&mut self, last: &str, recv: Option<&str>, p: usize) -> bool {
        let t = self.t;
        let Some((role, via, keys)) = common::aws_sdk_method(last) else {
            return false;
        };
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return false;
        };
        let request = t.is(a, "new")
            && t.ident(a + 1).is_some_and(|n| {
                matches!(
                    n,
                    "SendMessageRequest"
                        | "SendMessageBatchRequest"
                        | "ReceiveMessageRequest"
                        | "PublishRequest"
                        | "PublishBatchRequest"
                )
            });
        let named = recv.is_some_and(|r| {
            let lower = r.to_ascii_lowercase();
            lower.contains(&via.to_ascii_lowercase())
        });
        let address = if request {
            let body = a + 2;
            if t.is_punct(body, b'{') {
                // `{ QueueUrl = url, MessageBody = b }`.
                t.args(body).into_iter().find_map(|(x, y)| {
                    (t.ident(x).is_some_and(|k| keys.contains(&k)) && t.punct(x + 1) == b'=')
                        .then_some((x + 2, y))
                })
            } else if t.punct(body) == b'(' {
                t.args(body).first().copied()
            } else {
                None
            }
        } else if named && (args.len() >= 2 || role == EventRole::Consumer) {
            Some((a, e))
        } else {
            return false;
        };
        let topic = match address {
            Some((x, y)) if x < y => common::topic_of(common::aws_destination(eval(
                t,
                (x, y),
                &ExprRules::CSHARP,
                self.asg,
            ))),
            // A request whose address is set elsewhere: a site the graph lists as unresolved.
            _ => Some(Value::dynamic()),
        };
        if let Some(topic) = topic {
            let line = self.line(p);
            common::push_event(&mut self.facts, role, topic, via, line);
        }
        true
    }

    /// NATS (NATS.Client `c.Publish("subj", data)`, `SubscribeAsync("subj", h)`, NATS.Net
    /// `await nats.PublishAsync("subj", data)`, `nats.SubscribeAsync<T>("subj")`) and
    /// StackExchange.Redis (`sub.PublishAsync(RedisChannel.Literal("ch"), msg)`,
    /// `SubscribeAsync(RedisChannel.Pattern("orders.*"), h)`, `db.StreamAddAsync("s", …)`,
    /// `StreamReadGroupAsync("s", "g", "c")`) at the call `last(…)` on `recv` whose `(` is
    /// token `p`, in a file that imports the library. True when the call was one.
    pub(super) fn pubsub_call(&mut self, last: &str, recv: &str, p: usize) -> bool {
        let t = self.t;
        if common::pubsub_method(common::PubSub::Nats, last).is_none()
            && common::pubsub_method(common::PubSub::Redis, last).is_none()
        {
            return false;
        }
        let libs = common::PubSub::imported(&self.facts.imports);
        let Some(lib) = common::PubSub::for_receiver(libs, recv) else {
            return false;
        };
        let Some((role, _)) = common::pubsub_method(lib, last) else {
            return false;
        };
        // A named argument (`subject: "x"`, `channel: …`) is read by its value.
        let Some(&(mut a, e)) = t.args(p).first() else {
            return false;
        };
        if t.ident(a).is_some() && t.punct(a + 1) == b':' {
            a += 2;
        }
        // `RedisChannel.Literal("ch")`, `RedisChannel.Pattern(p)`, `new RedisChannel("ch", …)`.
        let open = if t.is(a, "RedisChannel")
            && t.punct(a + 1) == b'.'
            && t.ident(a + 2).is_some()
            && t.punct(a + 3) == b'('
        {
            Some(a + 3)
        } else if t.is(a, "new") && t.is(a + 1, "RedisChannel") && t.punct(a + 2) == b'(' {
            Some(a + 2)
        } else {
            None
        };
        let (a, e) = match open {
            Some(o) => match t.args(o).first() {
                Some(&r) => r,
                None => return true,
            },
            None => (a, e),
        };
        if let Some(topic) = self.topic_expr(a, e) {
            let line = self.line(p);
            common::push_event(&mut self.facts, role, topic, lib.via(), line);
        }
        true
    }

    /// The first type argument of the `<…>` right after token `k` (`IConsumer<OrderCreated>`
    /// → `OrderCreated`; a qualified name gives its last segment).
    pub(super) fn type_arg_after(&self, k: usize) -> Option<&'t str> {
        let t = self.t;
        if !t.is_punct(k + 1, b'<') {
            return None;
        }
        self.last_segment(k + 2)
    }

    /// The last segment of the dotted name that starts at token `j` (`Ns.X` → `X`), if an
    /// identifier stands there.
    fn last_segment(&self, mut j: usize) -> Option<&'t str> {
        let t = self.t;
        let mut last = None;
        while let Some(id) = t.ident(j) {
            last = Some(id);
            if t.is_punct(j + 1, b'.') {
                j += 2;
            } else {
                break;
            }
        }
        last
    }

    /// An event of a typed bus (the topic is the event type's name), at token `at`; an event
    /// already recorded on that line with that role and topic is not recorded twice.
    pub(super) fn typed_event(&mut self, role: EventRole, ev: &str, at: usize, via: &str) {
        let line = self.line(at);
        let typed = &mut self.typed;
        for e in &self.facts.events[typed.scanned..] {
            if let Some(topic) = e.topic.as_lit() {
                typed.seen.insert((e.line, e.role, topic.to_string()));
            }
        }
        if typed.seen.contains(&(line, role, ev.to_string())) {
            typed.scanned = self.facts.events.len();
            return;
        }
        common::push_event(&mut self.facts, role, Value::lit(ev), via, line);
        typed.seen.insert((line, role, ev.to_string()));
        typed.scanned = self.facts.events.len();
    }

    /// A publish or subscribe call of a typed event bus: `PublishAsync(new OrderPaid(…))`,
    /// `AddAndSaveEventAsync(evt)` with `evt = new X(…)`, `AddSubscription<OrderPaid, H>()`.
    /// The topic is the event type's name; a producer's site is where the event is built.
    /// True when it recorded something.
    pub(super) fn typed_bus(&mut self, role: EventRole, c: &Chain<'t>, p: usize) -> bool {
        let t = self.t;
        match role {
            EventRole::Consumer => {
                // `AddSubscription<TEvent, THandler>()` / `Subscribe<TEvent, THandler>()`.
                let k = p.checked_sub(1).filter(|&k| t.is_punct(k, b'>'));
                let Some(open) = k.and_then(|k| {
                    t.open_of(k)
                        .or_else(|| (0..k).rev().take(48).find(|&j| t.is_punct(j, b'<')))
                }) else {
                    return false;
                };
                let Some(ev) = self.type_arg_after(open - 1).filter(|n| is_event_type(n)) else {
                    return false;
                };
                // `AddSubscription<TEvent, THandler>`: the handler is where the event is
                // handled, so the answer names it next to the registration.
                let close = k.unwrap_or(open);
                let handler = (open + 1..close)
                    .find(|&j| t.is_punct(j, b','))
                    .and_then(|comma| (comma + 1..close).rev().find_map(|j| t.ident(j)));
                // Only a bus subscribes to a topic: a registration shape (`AddSubscription`,
                // a handler type next to the event), or `Subscribe<TEvent>(…)` on a receiver
                // typed, injected or named as an event bus. Aspire's
                // `eventing.Subscribe<BeforeStartEvent>(…)` and a UI's
                // `messenger.Subscribe<T>(…)` are in-process callbacks, not topics.
                let registration = c.last() == "AddSubscription" || handler.is_some();
                let bus = c
                    .receiver()
                    .is_some_and(|r| self.bind.get(r) == Some(&Bind::Bus) || is_bus_name(r));
                if !registration && !bus {
                    return false;
                }
                match handler {
                    Some(h) => {
                        let via = format!("event bus{}{h}", crate::index::facts::HANDLED_BY);
                        self.typed_event(role, ev, p, &via);
                    }
                    None => self.typed_event(role, ev, p, "event bus"),
                }
                true
            }
            EventRole::Producer => {
                let Some(&(a, e)) = t.args(p).first() else {
                    return false;
                };
                let found = self.event_types_of(a, e, p);
                match found.as_slice() {
                    [_, ..] => {
                        for &(ev, at) in &found {
                            self.typed_event(role, ev, at, "event bus");
                        }
                        true
                    }
                    // `eventBus.PublishAsync(evt)` with `evt` a parameter or variable of a base
                    // event type: a producer of some event, which only the run time knows. It is
                    // recorded with a run-time topic (listed as unresolved, with why) when the
                    // call is plainly a bus's: the receiver says bus or the method says event.
                    [] => {
                        let bus_like = c.receiver().is_some_and(|r| {
                            r.to_ascii_lowercase().contains("bus") || c.last().contains("Event")
                        });
                        // The argument names an event (`evt`, `someEvent`,
                        // `logEvt.IntegrationEvent`, `msg`), not a transaction id or a name.
                        let names_event = (a..e)
                            .rev()
                            .find_map(|k| t.ident(k))
                            .map(str::to_ascii_lowercase)
                            .is_some_and(|n| {
                                n.contains("ev") || n.contains("msg") || n.contains("message")
                            });
                        if !bus_like || !names_event || a >= e {
                            return false;
                        }
                        let mut arg = String::new();
                        for k in a..e.min(a + 12) {
                            arg.push_str(t.text(k));
                        }
                        let line = self.line(p);
                        self.facts.events.push(EventFact {
                            role,
                            topic: Value::dynamic(),
                            via: format!(
                                "event bus: `{}({arg})` publishes an event whose type is known only at run time",
                                c.last()
                            ),
                            line,
                        });
                        true
                    }
                }
            }
        }
    }

    /// The event types an argument holds and the tokens where the events are built: `new X(…)`
    /// in place, both arms of a conditional, or a local assigned `new X(…)` before the call
    /// (each assignment of it, a chain `x = y; y = …` followed a few steps).
    fn event_types_of(&mut self, a: usize, e: usize, at: usize) -> Vec<(&'t str, usize)> {
        self.index_assignments();
        let before = self.typed.ats.partition_point(|&x| x < at);
        if self.typed.memo_for != Some(before) {
            self.typed.memo.clear();
            self.typed.memo_for = Some(before);
        }
        self.event_types_in(a, e, at, 0)
    }

    /// [`Ex::event_types_of`] `depth` assignments away from the call.
    fn event_types_in(
        &mut self,
        a: usize,
        e: usize,
        at: usize,
        depth: u8,
    ) -> Vec<(&'t str, usize)> {
        let t = self.t;
        // `cond ? (IntegrationEvent)new A(…) : new B(…)`: every event the expression may
        // build. `new A(new Money(1))` builds A.
        let news: Vec<usize> = (a..e.min(a + 256)).filter(|&k| t.kw(k, "new")).collect();
        if news.len() > 1 || (news.len() == 1 && news[0] != a) {
            let mut found = Vec::new();
            for k in news {
                if let Some(ev) = self.new_event_at(k) {
                    add_found(&mut found, ev);
                }
            }
            return found;
        }
        if t.kw(a, "new") {
            return self.new_event_at(a).into_iter().collect();
        }
        match t.ident(a) {
            Some(name) if e == a + 1 && depth < MAX_DEPTH => self.variable_events(name, at, depth),
            _ => Vec::new(),
        }
    }

    /// Every event a variable may hold at token `at`: what each of its latest assignments
    /// before `at` builds (a variable of a base type may be given one of several events).
    /// Memoized by (variable, depth) for the calls that see the same assignments (see
    /// [`TypedEvents`]); a cycle (`x = y; y = x;`) ends at [`MAX_DEPTH`].
    fn variable_events(&mut self, name: &'t str, at: usize, depth: u8) -> Vec<(&'t str, usize)> {
        if let Some(found) = self.typed.memo.get(&(name, depth)) {
            return found.clone();
        }
        let t = self.t;
        let by_name = self.typed.by_name.as_ref();
        let earlier: Vec<(usize, usize)> =
            by_name
                .and_then(|m| m.get(name))
                .map_or(Vec::new(), |list| {
                    let p = list.partition_point(|&(x_at, _)| x_at < at);
                    list[..p]
                        .iter()
                        .rev()
                        .take(MAX_ASSIGNMENTS)
                        .map(|&(_, rhs)| rhs)
                        .collect()
                });
        let mut found = Vec::new();
        for (ra, re) in earlier {
            if re == ra + 1 && t.ident(ra) == Some(name) {
                continue; // `x = x`
            }
            for ev in self.event_types_in(ra, re, at, depth + 1) {
                add_found(&mut found, ev);
            }
        }
        self.typed.memo.insert((name, depth), found.clone());
        found
    }

    /// Builds the assignment lookups of [`TypedEvents`] on first use.
    fn index_assignments(&mut self) {
        if self.typed.by_name.is_some() {
            return;
        }
        let mut m: ByName<'t> = HashMap::new();
        for x in &self.asg.list {
            m.entry(x.name.as_str()).or_default().push((x.at, x.rhs));
        }
        for v in m.values_mut() {
            v.sort_unstable();
        }
        self.typed.by_name = Some(m);
        self.typed.ats = self.asg.list.iter().map(|x| x.at).collect();
        self.typed.ats.sort_unstable();
    }

    /// The event type `new X(…)` at token `k` builds (`new Ns.X(…)` names `X`), if it is one.
    fn new_event_at(&self, k: usize) -> Option<(&'t str, usize)> {
        let name = self.last_segment(k + 1)?;
        is_event_type(name).then_some((name, k))
    }
}

/// Adds an event to a lookup's result unless it is there already or the result is full.
fn add_found<'t>(found: &mut Vec<(&'t str, usize)>, ev: (&'t str, usize)) {
    if found.len() < MAX_FOUND && !found.contains(&ev) {
        found.push(ev);
    }
}

/// The role of a typed event bus call by its method name: `Publish…`, `…SaveEvent…`,
/// `AddAndSaveEventAsync`, `PublishThroughEventBusAsync` produce; `AddSubscription`,
/// `Subscribe` (with type arguments) consume.
pub(super) fn typed_bus_role(method: &str, recv: Option<&str>) -> Option<EventRole> {
    let _ = recv;
    if method.starts_with("Publish")
        || (method.contains("Event")
            && (method.contains("Save") || method.contains("Add") || method.contains("Raise")))
    {
        return Some(EventRole::Producer);
    }
    if method == "AddSubscription" || method == "Subscribe" || method == "SubscribeAsync" {
        return Some(EventRole::Consumer);
    }
    None
}

/// A type that is an event bus by its name: `IEventBus`, `RabbitMQEventBus`, MassTransit
/// `IBus`, `IMessageBus` (the last segment ends in `Bus`, a leading interface `I` allowed).
pub(super) fn is_bus_type(ty: &str) -> bool {
    let last = ty.rsplit('.').next().unwrap_or(ty);
    last.ends_with("Bus") && last.len() >= 3
}

/// A receiver named as an event bus: `eventBus`, `_bus`, `this.messageBus`.
fn is_bus_name(recv: &str) -> bool {
    let last = recv.rsplit('.').next().unwrap_or(recv);
    last.to_ascii_lowercase().ends_with("bus")
}

/// A type name that is an integration event or a message: `…IntegrationEvent`, `…Event`,
/// `…Message` — not an in-process domain event (`…DomainEvent`).
fn is_event_type(name: &str) -> bool {
    (name.ends_with("Event") || name.ends_with("Message") || name.ends_with("Command"))
        && !name.ends_with("DomainEvent")
        && name.len() > 5
}

#[cfg(test)]
mod aws_tests {
    use crate::index::facts::{EventRole, Value};
    use crate::index::lang::test_support::events;
    use EventRole::*;

    #[test]
    fn nats_and_stackexchange_redis() {
        use crate::index::lang::test_support::events_shown;
        let src = r#"using NATS.Client.Core;
namespace Shop;
public class Bus
{
    private const string Shipped = "orders.shipped";
    public async Task Run(NatsConnection nats, string subject)
    {
        await nats.PublishAsync("orders.created", order);
        await foreach (var msg in nats.SubscribeAsync<Order>("orders.*")) { }
        await nats.PublishAsync(subject: Shipped, data: order);
        await nats.PublishAsync(subject, order);
    }
}
"#;
        use EventRole::{Consumer, Producer};
        let s = |x: &str| x.to_string();
        assert_eq!(
            events_shown(&super::super::extract("Bus.cs", src)),
            vec![
                (Producer, s("orders.created"), "nats", 8),
                (Consumer, s("orders.*"), "nats", 9),
                (Producer, s("{Shipped}"), "nats", 10),
                // A parameter: the graph lists the site as unresolved.
                (Producer, s("{}"), "nats", 11),
            ]
        );
        let redis = r#"using StackExchange.Redis;
public class Cache
{
    public async Task Run(IConnectionMultiplexer mux)
    {
        var sub = mux.GetSubscriber();
        await sub.PublishAsync(RedisChannel.Literal("orders.created"), json);
        await sub.SubscribeAsync(RedisChannel.Pattern("orders.*"), (ch, v) => { });
        sub.Subscribe(new RedisChannel("orders.paid", RedisChannel.PatternMode.Literal), h);
        await db.StreamAddAsync("audit", "k", "v");
        await db.StringSetAsync("orders.created", json);
    }
}
"#;
        assert_eq!(
            events_shown(&super::super::extract("Cache.cs", redis)),
            vec![
                (Producer, s("orders.created"), "redis", 7),
                (Consumer, s("orders.*"), "redis", 8),
                (Consumer, s("orders.paid"), "redis", 9),
                (Producer, s("audit"), "redis", 10),
            ]
        );
        // Without the import: an in-house bus's typed publish stays the typed bus's.
        let plain = "public class P { async Task F() { await bus.PublishAsync(\"orders.created\", o); } }\n";
        assert!(
            events_shown(&super::super::extract("P.cs", plain))
                .iter()
                .all(|e| e.2 != "nats" && e.2 != "redis")
        );
    }

    #[test]
    fn aws_sqs_and_sns_sdk() {
        let src = r#"namespace Shop;
public class Publisher
{
    private const string Queue = "https://sqs.us-east-1.amazonaws.com/1/orders";
    public async Task Send(IAmazonSQS sqsClient, IAmazonSimpleNotificationService snsClient, string url)
    {
        await sqsClient.SendMessageAsync(new SendMessageRequest { QueueUrl = Queue, MessageBody = "x" });
        await sqsClient.SendMessageAsync("http://localhost:4566/000000000000/audit", "body");
        await _client.SendMessageAsync(new SendMessageRequest(url, "b"));
        await snsClient.PublishAsync(new PublishRequest { TopicArn = "arn:aws:sns:us-east-1:1:order-events", Message = "m" });
        var r = await sqsClient.ReceiveMessageAsync(new ReceiveMessageRequest { QueueUrl = Environment.GetEnvironmentVariable("INBOX_URL") });
        await eventBus.PublishAsync(new OrderPaidIntegrationEvent(1));
        await chat.SendMessageAsync("hello", user);
    }
}
"#;
        let f = super::super::extract("Publisher.cs", src);
        let aws: Vec<_> = events(&f)
            .into_iter()
            .filter(|e| e.2 == "SQS" || e.2 == "SNS")
            .collect();
        assert_eq!(
            aws,
            vec![
                // The constant's URL names the queue once the graph resolves it.
                (Producer, Value::reference("Queue"), "SQS", 7),
                (Producer, Value::lit("audit"), "SQS", 8),
                (Producer, Value::dynamic(), "SQS", 9),
                (Producer, Value::lit("order-events"), "SNS", 10),
                (Consumer, Value::env("INBOX_URL", None), "SQS", 11),
            ]
        );
        // The typed bus still reads its own publish; the chat's send is no SQS.
        assert!(
            events(&f)
                .iter()
                .any(|e| e.1 == Value::lit("OrderPaidIntegrationEvent"))
        );
        assert_eq!(events(&f).len(), 6, "{:?}", events(&f));
    }
}
