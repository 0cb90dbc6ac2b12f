//! Typed subscriptions handled in a class: `AddSubscription<OrderPaid, OrderPaidHandler>()`
//! registers the handler in one file while the event is handled in `OrderPaidHandler.Handle`
//! in another; `class X : IConsumer<OrderPaid>` names the class whose `Consume` handles it.
//! The extractor sees one file and records the consumer where the event type is named, with
//! the class in its `via` ([`facts::HANDLED_BY`]); the graph moves the consumer to the class's
//! handler method, keeping the registration line in the `via` (`registered at path:line`).
//!
//! So the consumer row names the code that runs, and `analyze_impact`'s `depth`, which
//! follows a consumer to what its file produces next, follows the handler's body.
//!
//! The class is looked for among the declarations of the registering root only (a handler of
//! the same name in another service handles another subscription); a name declared twice in
//! the root, or not at all, leaves the consumer where it was registered.

use std::collections::HashMap;
use std::sync::Arc;

use super::facts::{self, EventRole, SymbolKind};
use super::graph::{EventLink, Loc, method_key};
use super::snapshot::FileEntry;

/// Names of the method that handles an event in the handler types the extractors know
/// (eShop's `IIntegrationEventHandler<T>.Handle`, MediatR `Handle`, MassTransit
/// `IConsumer<T>.Consume`, Spring `ApplicationListener<T>.onApplicationEvent`), as
/// [`method_key`]s.
const HANDLER_METHODS: [&str; 7] = [
    "handle",
    "handleasync",
    "consume",
    "consumeasync",
    "onapplicationevent",
    "handleevent",
    "onmessage",
];

/// Moves every consumer whose `via` names its handler class to that class's handler method
/// (or the class itself when no single handler method is declared), in the registering root.
pub fn relocate_to_handlers(
    events: &mut [EventLink],
    files: &[Arc<FileEntry>],
    display: &dyn Fn(&FileEntry) -> String,
) {
    let wanted: Vec<(usize, &str)> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.role == EventRole::Consumer)
        .filter_map(|(i, e)| facts::handler_in_via(&e.via).map(|h| (i, h)))
        .collect();
    if wanted.is_empty() {
        return;
    }
    // (root, class) → the declarations of that class name: (file, line of its name).
    let mut classes: HashMap<(u16, &str), Vec<(u32, u32)>> = HashMap::new();
    for &(i, h) in &wanted {
        let root = files[events[i].at.file as usize].root;
        classes.entry((root, h)).or_default();
    }
    for (fi, f) in files.iter().enumerate() {
        if f.generated {
            continue;
        }
        for s in f.symbols() {
            if !matches!(s.kind, SymbolKind::Class | SymbolKind::Struct) {
                continue;
            }
            if let Some(found) = classes.get_mut(&(f.root, f.name(s))) {
                found.push((fi as u32, s.line));
            }
        }
    }
    // The moves are decided first (the `via`s are borrowed for the names).
    let mut moves: Vec<(usize, Loc)> = Vec::new();
    for &(i, h) in &wanted {
        let root = files[events[i].at.file as usize].root;
        let Some(&[(file, class_line)]) = classes.get(&(root, h)).map(Vec::as_slice) else {
            continue;
        };
        let f = &files[file as usize];
        let methods: Vec<u32> = f
            .symbols()
            .iter()
            .filter(|s| {
                matches!(s.kind, SymbolKind::Method | SymbolKind::Function)
                    && f.container(s) == Some(h)
                    && HANDLER_METHODS.contains(&method_key(f.name(s)).as_str())
            })
            .map(|s| s.line)
            .collect();
        // Two `Handle` overloads (a class handling two events): the class, not a guess.
        let line = match methods.as_slice() {
            [one] => *one,
            _ => class_line,
        };
        moves.push((i, Loc { file, line }));
    }
    for (i, to) in moves {
        let e = &mut events[i];
        if e.at == to {
            continue;
        }
        // A class that names its event in its own declaration (`: IConsumer<X>`) has no
        // registration elsewhere to cite.
        if e.at.file != to.file {
            let reg = &files[e.at.file as usize];
            e.via = format!("{}; registered at {}:{}", e.via, display(reg), e.at.line);
        }
        e.at = to;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::index::facts::EventRole;
    use crate::index::snapshot::Snapshot;

    /// Payments publishes `OrderPaidIntegrationEvent`; ordering registers its handler in one
    /// file and handles it in another, whose body publishes `StockReservedIntegrationEvent`;
    /// stock declares a handler class of the same name (its own service's) and subscribes to
    /// the next event; a MassTransit consumer and a Spring `ApplicationListener` handle events
    /// in methods of their own class; an Aspire AppHost subscribes a callback to its eventing.
    pub(crate) fn typed_shop() -> Snapshot {
        Snapshot::of_sources(&[
            (
                "services/payments",
                "Pay.cs",
                "public class Pay(IEventBus eventBus)\n{\n    public Task Run() => eventBus.PublishAsync(new OrderPaidIntegrationEvent(1));\n}\n",
            ),
            (
                "services/ordering",
                "Extensions/Extensions.cs",
                "public static class Extensions\n{\n    public static void AddEvents(this IEventBusBuilder eventBus)\n    {\n        eventBus.AddSubscription<OrderPaidIntegrationEvent, OrderPaidIntegrationEventHandler>();\n    }\n}\n",
            ),
            (
                "services/ordering",
                "Handlers/OrderPaidIntegrationEventHandler.cs",
                "// Zahlung bestätigt — ünïcode\npublic class OrderPaidIntegrationEventHandler(IEventBus eventBus)\n    : IIntegrationEventHandler<OrderPaidIntegrationEvent>\n{\n    public async Task Handle(OrderPaidIntegrationEvent @event)\n    {\n        await eventBus.PublishAsync(new StockReservedIntegrationEvent(@event.Id));\n    }\n}\n",
            ),
            (
                "services/stock",
                "OrderPaidIntegrationEventHandler.cs",
                "public class OrderPaidIntegrationEventHandler\n{\n    public Task Handle(OrderPaidIntegrationEvent e) => Task.CompletedTask;\n}\n",
            ),
            (
                "services/stock",
                "Program.cs",
                "public static class Program\n{\n    public static void Main(IEventBusBuilder b)\n    {\n        b.AddSubscription<StockReservedIntegrationEvent, StockReservedHandler>();\n        b.AddSubscription<OrderCancelledIntegrationEvent, MissingHandler>();\n    }\n}\n",
            ),
            (
                "services/stock",
                "StockReservedHandler.cs",
                "public class StockReservedHandler : IIntegrationEventHandler<StockReservedIntegrationEvent>\n{\n    public Task Handle(StockReservedIntegrationEvent e) => Task.CompletedTask;\n}\n",
            ),
            (
                "services/mail",
                "ReceiptMailer.cs",
                "public class ReceiptMailer : IConsumer<OrderPaidIntegrationEvent>\n{\n    private int sent;\n    public Task Consume(ConsumeContext<OrderPaidIntegrationEvent> context) => Task.CompletedTask;\n}\n",
            ),
            (
                "services/audit",
                "src/main/java/AuditListener.java",
                "package audit;\n\npublic class AuditListener implements ApplicationListener<OrderAuditedEvent> {\n    @Override\n    public void onApplicationEvent(OrderAuditedEvent e) {\n        System.out.println(e);\n    }\n}\n",
            ),
            (
                "services/audit",
                "src/main/kotlin/ShipmentAudit.kt",
                "package audit\n\nclass ShipmentAudit : ApplicationListener<OrderShippedEvent> {\n    override fun onApplicationEvent(event: OrderShippedEvent) {}\n}\n",
            ),
            (
                "apphost",
                "Extensions.cs",
                "public class Hook\n{\n    public Task SubscribeAsync(IDistributedApplicationEventing eventing)\n    {\n        eventing.Subscribe<BeforeStartEvent>((e, ct) => Task.CompletedTask);\n        return Task.CompletedTask;\n    }\n}\n",
            ),
        ])
    }

    /// Every consumer as (path, line, via).
    fn consumers(snap: &Snapshot) -> Vec<(String, u32, String)> {
        let g = &snap.graph;
        let mut out: Vec<(String, u32, String)> = g
            .events
            .iter()
            .filter(|e| e.role == EventRole::Consumer)
            .map(|e| {
                let f = &snap.files[e.at.file as usize];
                let root = &snap.roots[f.root as usize].label;
                (format!("{root}/{}", f.path), e.at.line, e.via.clone())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_consumer_is_its_handlers_method_in_the_registering_root() {
        let snap = typed_shop();
        assert_eq!(
            consumers(&snap),
            vec![
                (
                    "services/audit/src/main/java/AuditListener.java".into(),
                    5,
                    "ApplicationEvent, handled by AuditListener".into()
                ),
                (
                    "services/audit/src/main/kotlin/ShipmentAudit.kt".into(),
                    4,
                    "ApplicationEvent, handled by ShipmentAudit".into()
                ),
                (
                    "services/mail/ReceiptMailer.cs".into(),
                    4,
                    "MassTransit, handled by ReceiptMailer".into()
                ),
                (
                    "services/ordering/Handlers/OrderPaidIntegrationEventHandler.cs".into(),
                    5,
                    "event bus, handled by OrderPaidIntegrationEventHandler; registered at services/ordering/Extensions/Extensions.cs:5".into()
                ),
                // No class of that name in the root: the registration stays the evidence.
                (
                    "services/stock/Program.cs".into(),
                    6,
                    "event bus, handled by MissingHandler".into()
                ),
                (
                    "services/stock/StockReservedHandler.cs".into(),
                    3,
                    "event bus, handled by StockReservedHandler; registered at services/stock/Program.cs:5".into()
                ),
            ]
        );
        // The AppHost's eventing is no bus: no topic.
        assert!(
            !snap
                .graph
                .topics
                .iter()
                .any(|t| t.name == "BeforeStartEvent"),
            "{:?}",
            snap.graph.topics
        );
    }
}
