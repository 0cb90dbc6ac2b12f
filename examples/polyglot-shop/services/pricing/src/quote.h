// Price computation, independent of gRPC so it can be unit tested.
#pragma once

#include <cstdint>
#include <string>

namespace acme::pricing {

// A priced line: unit price times quantity, plus a surcharge when stock is scarce.
struct Quote {
  std::string sku;
  int32_t quantity;
  int64_t total_minor;
  bool surcharge;
};

// Prices `quantity` units of `sku`; `available` is the stock level reported by inventory.
Quote ComputeQuote(const std::string& sku, int32_t quantity, int32_t available);

}  // namespace acme::pricing
