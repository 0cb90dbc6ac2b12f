//! The ledger service: serves LedgerService over gRPC (tonic) and books every completed
//! payment it reads from Kafka.

mod book;
mod consumer;

use std::sync::Arc;

use tonic::{transport::Server, Request, Response, Status};

use crate::book::{Book, EntryKind};

pub mod acme {
    pub mod common {
        pub mod v1 {
            tonic::include_proto!("acme.common.v1");
        }
    }
    pub mod ledger {
        pub mod v1 {
            tonic::include_proto!("acme.ledger.v1");
        }
    }
}

use acme::common::v1::Money;
use acme::ledger::v1::ledger_service_server::{self, LedgerServiceServer};
use acme::ledger::v1::{Balance, GetBalanceRequest, RecordEntryRequest, RecordEntryResponse};

/// The gRPC face of the book.
pub struct LedgerImpl {
    book: Arc<Book>,
}

#[tonic::async_trait]
impl ledger_service_server::LedgerService for LedgerImpl {
    async fn record_entry(&self, request: Request<RecordEntryRequest>) -> Result<Response<RecordEntryResponse>, Status> {
        let req = request.into_inner();
        let amount = req.amount.map(|m| m.amount_minor).unwrap_or(0);
        let entry_id = self.book.record(&req.order_id, &req.account, amount, EntryKind::Credit);
        Ok(Response::new(RecordEntryResponse { entry_id }))
    }

    async fn get_balance(&self, request: Request<GetBalanceRequest>) -> Result<Response<Balance>, Status> {
        let account = request.into_inner().account;
        let amount_minor = self.book.balance(&account);
        let amount = Some(Money { currency: "EUR".into(), amount_minor });
        Ok(Response::new(Balance { account, amount }))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let book = Arc::new(Book::default());
    tokio::spawn(consumer::run(book.clone()));
    let addr = "0.0.0.0:50051".parse()?;
    Server::builder()
        .add_service(LedgerServiceServer::new(LedgerImpl { book }))
        .serve(addr)
        .await?;
    Ok(())
}
