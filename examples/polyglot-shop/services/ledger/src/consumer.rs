//! Reads `payments.completed` (rdkafka) and books a debit on the receivables account.

use std::sync::Arc;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::Message;

use crate::book::{Book, EntryKind};

/// The topic payments publishes to once a payment is authorized.
pub const PAYMENTS_COMPLETED: &str = "payments.completed";

pub async fn run(book: Arc<Book>) {
    let consumer: StreamConsumer = match ClientConfig::new()
        .set("group.id", "ledger")
        .set("bootstrap.servers", "kafka:9092")
        .create()
    {
        Ok(consumer) => consumer,
        Err(e) => return eprintln!("ledger: cannot create the Kafka consumer: {e}"),
    };
    if let Err(e) = consumer.subscribe(&[PAYMENTS_COMPLETED]) {
        return eprintln!("ledger: cannot subscribe to {PAYMENTS_COMPLETED}: {e}");
    }
    loop {
        match consumer.recv().await {
            Ok(msg) => {
                let order_id = msg.key().map(|k| String::from_utf8_lossy(k).into_owned()).unwrap_or_default();
                book.record(&order_id, "receivables", 0, EntryKind::Debit);
            }
            Err(e) => eprintln!("ledger: Kafka error: {e}"),
        }
    }
}
