//! Pub/sub on the JVM: NATS (jnats `connection.publish("subj", bytes)`,
//! `dispatcher.subscribe("subj")`, JetStream's `js.publish`), Redis (Jedis / Lettuce
//! `publish(ch, msg)`, `subscribe(listener, ch…)`, `xadd(key, …)`; Spring Data Redis's
//! `redisTemplate.convertAndSend(ch, msg)` is read with the other templates in `kafka.rs`,
//! its listener topics `new ChannelTopic("ch")` / `PatternTopic` here), and Spring Cloud
//! Stream (`streamBridge.send("orders-out-0", ev)` and the functional `@Bean` `Consumer`,
//! `Supplier` and `Function` methods), whose destinations are configured in property files.

use super::super::common::{self, PubSub};
use super::recognize::Ctx;
use super::*;

/// The `via` of a Spring Cloud Stream binding used by `StreamBridge.send`.
pub const STREAM_VIA: &str = "spring-cloud-stream";

/// The `via` of a Spring Cloud Stream functional bean (`@Bean Consumer<T> orders()`): the
/// graph keeps one only when its destination is configured, or its root configures Spring
/// Cloud Stream or Function at all, since a `Consumer` bean may be something else.
pub const STREAM_BEAN_VIA: &str = "spring-cloud-stream @Bean";

/// The topic a Spring Cloud Stream binding sends to or reads from: the binding's
/// `spring.cloud.stream.bindings.<binding>.destination` property, falling back to the
/// binding's own name when no property file sets it (as the binder does).
pub fn stream_destination(binding: &str) -> Value {
    Value {
        parts: vec![Part::Config {
            key: format!("spring.cloud.stream.bindings.{binding}.destination"),
            default: Some(binding.to_string()),
        }],
    }
}

impl<'s, 'a> Ctx<'s, 'a> {
    /// A NATS or Redis call named at token `k` (a `.` before, a `(` after) on a receiver of
    /// a library the file imports (`libs`); true when it was one.
    pub(super) fn pubsub_call(&self, k: usize, libs: (bool, bool), facts: &mut FileFacts) -> bool {
        let src = self.src;
        let Some(recv) = src.ident(k - 2) else {
            return false;
        };
        let Some(lib) = PubSub::for_receiver(libs, recv) else {
            return false;
        };
        let Some((role, stream)) = common::pubsub_method(lib, src.toks[k].text) else {
            return false;
        };
        // A Kafka consumer's `subscribe` stays kafka-clients'.
        if recv.to_ascii_lowercase().contains("consumer") {
            return false;
        }
        let line = src.toks[k].line;
        let args = src.split_commas(k + 2, src.close_or_end(k + 1));
        let is_str = |r: (usize, usize)| r.1 == r.0 + 1 && src.toks[r.0].kind == TokKind::Str;
        let picked: Vec<(usize, usize)> = match (lib, role) {
            (PubSub::Redis, EventRole::Consumer) if stream => Vec::new(),
            // Jedis `subscribe(listener, "a", "b")`, Lettuce `subscribe("a", "b")`.
            (PubSub::Redis, EventRole::Consumer) => {
                let skip = usize::from(args.len() >= 2 && !is_str(args[0]));
                args.iter().skip(skip).copied().collect()
            }
            _ => args.first().copied().into_iter().collect(),
        };
        for r in picked {
            if let Some(topic) = self.topic(r) {
                common::push_event(facts, role, topic, lib.via(), line);
            }
        }
        true
    }

    /// Spring Data Redis listener topics at token `k`: `new ChannelTopic("ch")`,
    /// `ChannelTopic.of("ch")`, `new PatternTopic("orders.*")` consume the channel.
    pub(super) fn redis_listener_topic(&self, k: usize, facts: &mut FileFacts) {
        let src = self.src;
        let open = if src.is(k + 1, "(") {
            k + 1
        } else if src.is(k + 1, ".") && src.kw(k + 2, "of") && src.is(k + 3, "(") {
            k + 3
        } else {
            return;
        };
        if let Some(r) = src.first_arg(open)
            && let Some(topic) = self.topic(r)
        {
            common::push_event(facts, EventRole::Consumer, topic, "redis", src.toks[k].line);
        }
    }

    /// `streamBridge.send("orders-out-0", ev)` at token `k`: a producer to the binding's
    /// destination ([`stream_destination`]); a binding named by a constant is read as a
    /// topic. False when the receiver is not a `StreamBridge`.
    pub(super) fn stream_bridge_send(&self, k: usize, facts: &mut FileFacts) -> bool {
        let src = self.src;
        let Some(recv) = src.ident(k - 2) else {
            return false;
        };
        if !recv.to_ascii_lowercase().contains("streambridge") {
            return false;
        }
        let Some(r) = src.first_arg(k + 1) else {
            return true;
        };
        let topic = match src.lit(r.0).filter(|l| r.1 == r.0 + 1 && !l.templated) {
            Some(l) => Some(stream_destination(&l.value)),
            None => self.topic(r),
        };
        if let Some(topic) = topic {
            common::push_event(
                facts,
                EventRole::Producer,
                topic,
                STREAM_VIA,
                src.toks[k].line,
            );
        }
        true
    }

    /// A functional `@Bean` whose annotation ends before token `end` (facts on the method's
    /// name line): Java `public
    /// Consumer<Order> orders()`, Kotlin `fun orders(): Consumer<Order>`. A `Consumer` reads
    /// binding `orders-in-0`, a `Supplier` writes `orders-out-0`, a `Function` both.
    pub(super) fn function_bean(&self, end: usize, facts: &mut FileFacts) {
        let src = self.src;
        let mut j = end;
        for _ in 0..16 {
            if src.is(j, "@") {
                match parse_ann(src, j) {
                    Some(a) => j = a.end,
                    None => return,
                }
            } else if src.ident(j).is_some_and(|w| {
                matches!(
                    w,
                    "public"
                        | "protected"
                        | "private"
                        | "static"
                        | "final"
                        | "open"
                        | "override"
                        | "internal"
                )
            }) {
                j += 1;
            } else {
                break;
            }
        }
        let kind_at = |i: usize| -> Option<&'a str> {
            // `java.util.function.Consumer`: the last segment.
            let mut i = i;
            while src.ident(i).is_some() && src.is(i + 1, ".") {
                i += 2;
            }
            src.ident(i)
                .filter(|t| matches!(*t, "Consumer" | "Supplier" | "Function"))
        };
        let (kind, name) = if src.kw(j, "fun") {
            if src.ident(j + 1).is_none() || !src.is(j + 2, "(") {
                return;
            }
            let close = src.close_or_end(j + 2);
            let Some(kind) = (if src.is(close + 1, ":") || src.is(close + 1, "=") {
                kind_at(close + 2)
            } else {
                None
            }) else {
                return;
            };
            (kind, j + 1)
        } else {
            let Some(kind) = kind_at(j) else {
                return;
            };
            let mut i = j;
            while src.ident(i).is_some() && src.is(i + 1, ".") {
                i += 2;
            }
            let after = src.skip_generics(i + 1);
            if src.ident(after).is_none() || !src.is(after + 1, "(") {
                return;
            }
            (kind, after)
        };
        let (name, line) = (src.toks[name].text, src.toks[name].line);
        if kind != "Supplier" {
            let topic = stream_destination(&format!("{name}-in-0"));
            common::push_event(facts, EventRole::Consumer, topic, STREAM_BEAN_VIA, line);
        }
        if kind != "Consumer" {
            let topic = stream_destination(&format!("{name}-out-0"));
            common::push_event(facts, EventRole::Producer, topic, STREAM_BEAN_VIA, line);
        }
    }
}
