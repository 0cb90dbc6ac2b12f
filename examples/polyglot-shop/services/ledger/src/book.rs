//! The double-entry book, in memory.

use std::collections::HashMap;
use std::sync::Mutex;

/// Which side of the book an entry is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Debit,
    Credit,
}

/// One booked movement of money.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: String,
    pub order_id: String,
    pub account: String,
    pub amount_minor: i64,
    pub kind: EntryKind,
}

/// Every entry, and the running balance per account.
#[derive(Default)]
pub struct Book {
    entries: Mutex<Vec<Entry>>,
    balances: Mutex<HashMap<String, i64>>,
}

impl Book {
    pub fn record(&self, order_id: &str, account: &str, amount_minor: i64, kind: EntryKind) -> String {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let id = format!("ent-{:06}", entries.len() + 1);
        let signed = if kind == EntryKind::Credit { amount_minor } else { -amount_minor };
        *self.balances.lock().unwrap_or_else(|e| e.into_inner()).entry(account.to_string()).or_default() += signed;
        entries.push(Entry { id: id.clone(), order_id: order_id.into(), account: account.into(), amount_minor, kind });
        id
    }

    pub fn balance(&self, account: &str) -> i64 {
        self.balances.lock().unwrap_or_else(|e| e.into_inner()).get(account).copied().unwrap_or(0)
    }
}
