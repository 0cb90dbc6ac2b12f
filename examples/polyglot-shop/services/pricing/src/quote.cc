#include "quote.h"

#include <map>

namespace acme::pricing {

namespace {
const std::map<std::string, int64_t> kUnitPriceMinor = {
    {"SKU-RED-MUG", 1200},
    {"SKU-BLUE-MUG", 1200},
    {"SKU-TEAPOT", 3900},
};
constexpr int32_t kScarceBelow = 5;
}  // namespace

Quote ComputeQuote(const std::string& sku, int32_t quantity, int32_t available) {
  auto it = kUnitPriceMinor.find(sku);
  int64_t unit = it == kUnitPriceMinor.end() ? 0 : it->second;
  bool scarce = available < kScarceBelow;
  int64_t total = unit * quantity;
  if (scarce) {
    total += total / 10;  // 10 % scarcity surcharge
  }
  return Quote{sku, quantity, total, scarce};
}

}  // namespace acme::pricing
