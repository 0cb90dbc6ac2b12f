//! Typed event buses: a publish or subscribe call whose topic is the event type's name
//! (`PublishAsync(new OrderPaid(…))`, `AddSubscription<OrderPaid, H>()`), and how the event
//! type is found from the argument.

use super::*;

impl<'t> Ex<'t, '_, '_> {
    /// The first type argument of the `<…>` right after token `k` (`IConsumer<OrderCreated>`
    /// → `OrderCreated`; a qualified name gives its last segment).
    pub(super) fn type_arg_after(&self, k: usize) -> Option<&'t str> {
        let t = self.t;
        if !t.is_punct(k + 1, b'<') {
            return None;
        }
        let mut j = k + 2;
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

    /// An event of a typed bus (the topic is the event type's name), at token `at`.
    pub(super) fn typed_event(&mut self, role: EventRole, ev: &str, at: usize, via: &str) {
        let line = self.line(at);
        if self
            .facts
            .events
            .iter()
            .any(|e| e.line == line && e.role == role && e.topic.as_lit() == Some(ev))
        {
            return;
        }
        common::push_event(&mut self.facts, role, Value::lit(ev), via, line);
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
                match handler {
                    Some(h) => {
                        let via = format!("event bus, handled by {h}");
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
                match self.event_type_of(a, e, p) {
                    Some((ev, at)) => {
                        self.typed_event(role, ev, at, "event bus");
                        true
                    }
                    // `eventBus.PublishAsync(evt)` with `evt` a parameter or variable of a base
                    // event type: a producer of some event, which only the run time knows. It is
                    // recorded with a run-time topic (listed as unresolved, with why) when the
                    // call is plainly a bus's: the receiver says bus or the method says event.
                    None => {
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

    /// The event type an argument holds and the token where the event is built: `new X(…)`
    /// in place, or a local assigned `new X(…)` before the call (each assignment of it).
    fn event_type_of(&mut self, a: usize, e: usize, at: usize) -> Option<(&'t str, usize)> {
        self.event_type_in(a, e, at, 0)
    }

    /// [`Ex::event_type_of`] `depth` assignments away from the call (a chain `x = y; y = …`
    /// is followed a few steps, never round a cycle).
    fn event_type_in(
        &mut self,
        a: usize,
        e: usize,
        at: usize,
        depth: u8,
    ) -> Option<(&'t str, usize)> {
        /// How many assignments back a variable is followed.
        const MAX_DEPTH: u8 = 4;
        /// How many earlier assignments of one variable count (the branches that set it).
        const MAX_ASSIGNMENTS: usize = 8;
        let t = self.t;
        // `cond ? (IntegrationEvent)new A(…) : new B(…)`: every event the expression may
        // build (the first is returned, the others recorded). `new A(new Money(1))` builds A.
        let news: Vec<usize> = (a..e.min(a + 256)).filter(|&k| t.kw(k, "new")).collect();
        if news.len() > 1 || (news.len() == 1 && news[0] != a) {
            let mut found = None;
            for k in news {
                if let Some((ev, site)) = self.new_event_at(k) {
                    if found.is_none() {
                        found = Some((ev, site));
                    } else {
                        self.typed_event(EventRole::Producer, ev, site, "event bus");
                    }
                }
            }
            return found;
        }
        if t.kw(a, "new") {
            return self.new_event_at(a);
        }
        if e == a + 1
            && depth < MAX_DEPTH
            && let Some(name) = t.ident(a)
        {
            // Every `name = new X(…)` before the call in the enclosing block: a variable of a
            // base type may be given one of several events.
            let earlier: Vec<(usize, usize)> = self
                .asg
                .list
                .iter()
                .filter(|x| x.name == name && x.at < at)
                .map(|x| x.rhs)
                .collect();
            let mut found = None;
            for (ra, re) in earlier.into_iter().rev().take(MAX_ASSIGNMENTS) {
                if re == ra + 1 && t.ident(ra) == Some(name) {
                    continue; // `x = x`
                }
                if let Some((ev, site)) = self.event_type_in(ra, re, at, depth + 1) {
                    if found.is_none() {
                        found = Some((ev, site));
                    } else {
                        self.typed_event(EventRole::Producer, ev, site, "event bus");
                    }
                }
            }
            return found;
        }
        None
    }

    /// The event type `new X(…)` at token `k` builds (`new Ns.X(…)` names `X`), if it is one.
    fn new_event_at(&self, k: usize) -> Option<(&'t str, usize)> {
        let t = self.t;
        let mut j = k + 1;
        let mut last = None;
        while let Some(id) = t.ident(j) {
            last = Some(id);
            if t.is_punct(j + 1, b'.') {
                j += 2;
            } else {
                break;
            }
        }
        let name = last?;
        is_event_type(name).then_some((name, k))
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

/// A type name that is an integration event or a message: `…IntegrationEvent`, `…Event`,
/// `…Message` — not an in-process domain event (`…DomainEvent`).
fn is_event_type(name: &str) -> bool {
    (name.ends_with("Event") || name.ends_with("Message") || name.ends_with("Command"))
        && !name.ends_with("DomainEvent")
        && name.len() > 5
}
