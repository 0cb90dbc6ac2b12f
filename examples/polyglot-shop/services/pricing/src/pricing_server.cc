// The pricing service: serves PricingService and asks inventory for stock levels.
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "inventory/v1/inventory.grpc.pb.h"
#include "pricing/v1/pricing.grpc.pb.h"
#include "quote.h"

using acme::inventory::v1::GetStockRequest;
using acme::inventory::v1::InventoryService;
using acme::inventory::v1::StockLevel;
using acme::pricing::v1::PricingService;
using acme::pricing::v1::QuoteRequest;
using acme::pricing::v1::QuoteResponse;

class PricingServiceImpl final : public PricingService::Service {
 public:
  explicit PricingServiceImpl(std::shared_ptr<grpc::Channel> channel) {
    inventory_ = InventoryService::NewStub(channel);
  }

  grpc::Status GetQuote(grpc::ServerContext* context, const QuoteRequest* request,
                        QuoteResponse* response) override {
    GetStockRequest stock_request;
    stock_request.set_sku(request->sku());
    StockLevel level;
    grpc::ClientContext client_context;
    grpc::Status status = inventory_->GetStock(&client_context, stock_request, &level);
    if (!status.ok()) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "inventory: " + status.error_message());
    }
    acme::pricing::Quote quote = acme::pricing::ComputeQuote(request->sku(), request->quantity(), level.available());
    response->mutable_total()->set_currency(request->currency());
    response->mutable_total()->set_amount_minor(quote.total_minor);
    response->set_surcharge(quote.surcharge);
    return grpc::Status::OK;
  }

 private:
  std::unique_ptr<InventoryService::Stub> inventory_;
};

int main() {
  auto channel = grpc::CreateChannel("inventory:50051", grpc::InsecureChannelCredentials());
  PricingServiceImpl service(channel);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("0.0.0.0:50051", grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  server->Wait();
  return 0;
}
