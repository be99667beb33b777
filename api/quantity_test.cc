#include "api/quantity.h"

#include <catch2/catch.hpp>

namespace lahar {
namespace {

int64_t Milli(std::string_view s) { return ParseQuantity(s, QuantityUnit::kMilli).value(); }
int64_t Unit(std::string_view s) { return ParseQuantity(s, QuantityUnit::kUnit).value(); }

TEST_CASE("quantities parse as Kubernetes parses them") {
  CHECK(Milli("500m") == 500);
  CHECK(Milli("1.5") == 1500);
  CHECK(Milli("2") == 2000);
  CHECK(Unit("4Gi") == 4LL << 30);
  CHECK(Unit("1e3") == 1000);
  CHECK(Unit("2k") == 2000);
  CHECK(Unit("1.5") == 2);  // rounds up like Quantity.Value()
  CHECK(Milli("0.0001") == 1);
}

}  // namespace
}  // namespace lahar
