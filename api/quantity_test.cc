#include "api/quantity.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/status/status.h"

namespace lahar {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

int64_t Milli(std::string_view s) { return ParseQuantity(s, QuantityUnit::kMilli).value(); }
int64_t Unit(std::string_view s) { return ParseQuantity(s, QuantityUnit::kUnit).value(); }

absl::Status MilliError(std::string_view s) {
  return ParseQuantity(s, QuantityUnit::kMilli).status();
}
absl::Status UnitError(std::string_view s) {
  return ParseQuantity(s, QuantityUnit::kUnit).status();
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

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

TEST_CASE("every decimal suffix scales by its power of ten") {
  CHECK(Unit("7") == 7);
  CHECK(Unit("1k") == 1'000);
  CHECK(Unit("1M") == 1'000'000);
  CHECK(Unit("1G") == 1'000'000'000);
  CHECK(Unit("1T") == 1'000'000'000'000);
  CHECK(Unit("1P") == 1'000'000'000'000'000);
  CHECK(Unit("1E") == 1'000'000'000'000'000'000);  // a bare E is exa, not an exponent
  CHECK(Unit("9E") == 9'000'000'000'000'000'000);
  CHECK(Milli("250m") == 250);
  CHECK(Milli("3k") == 3'000'000);  // 3000 cores
  // n and u are accepted by Kubernetes too (metrics-server reports cpu in n).
  CHECK(Milli("1500000000n") == 1500);
  CHECK(Milli("2500u") == 3);  // 2.5m rounds up
  CHECK(Unit("1000000000n") == 1);
}

TEST_CASE("every binary suffix scales by its power of two") {
  CHECK(Unit("1Ki") == 1024);
  CHECK(Unit("1Mi") == int64_t{1} << 20);
  CHECK(Unit("1Gi") == int64_t{1} << 30);
  CHECK(Unit("1Ti") == int64_t{1} << 40);
  CHECK(Unit("1Pi") == int64_t{1} << 50);
  CHECK(Unit("1Ei") == int64_t{1} << 60);
  CHECK(Unit("7Ei") == int64_t{7} << 60);
  CHECK(Unit("1.5Gi") == 1'610'612'736);  // 1.5 * 2^30
  CHECK(Unit("0.5Ki") == 512);
  CHECK(Unit("1.0001Ki") == 1025);  // 1024.1024 rounds up
  CHECK(Milli("1Ki") == 1'024'000);
}

TEST_CASE("exponents in either case and with either sign") {
  CHECK(Unit("1e3") == 1000);
  CHECK(Unit("1E3") == 1000);
  CHECK(Unit("1e+3") == 1000);
  CHECK(Unit("1.5e3") == 1500);
  CHECK(Unit("1e0") == 1);
  CHECK(Milli("1e-2") == 10);
  CHECK(Milli("1E-2") == 10);
  CHECK(Milli("1e-3") == 1);
  CHECK(Milli("2.5e-3") == 3);  // 2.5m rounds up
  CHECK(Unit("1e18") == 1'000'000'000'000'000'000);
  CHECK(Unit("12e-1") == 2);  // 1.2 rounds up
  CHECK(Unit("0e999999") == 0);
  CHECK(Unit("1e-999999") == 1);  // tiny but positive: one unit
}

TEST_CASE("signs and partial decimals") {
  CHECK(Milli(".5") == 500);
  CHECK(Milli("5.") == 5000);
  CHECK(Milli("+.5") == 500);
  CHECK(Milli("+1") == 1000);
  CHECK(Milli("-1") == -1000);
  CHECK(Milli("-500m") == -500);
  CHECK(Unit("-4Gi") == -(int64_t{4} << 30));
  CHECK(Unit("0") == 0);
  CHECK(Unit("-0") == 0);
  CHECK(Unit("0.0") == 0);
  CHECK(Unit("000000000000000000000000000000000000000000000042") == 42);
  CHECK(Unit("1.000000000000000000000000000000000000000000000000") == 1);
}

TEST_CASE("fractions round up to the canonical unit, towards +inf") {
  // Quantity.Value() and MilliValue() return ceil(q / unit).
  CHECK(Unit("0.1") == 1);
  CHECK(Unit("1m") == 1);
  CHECK(Unit("1001m") == 2);
  CHECK(Unit("1000m") == 1);
  CHECK(Milli("0.0005") == 1);
  CHECK(Milli("1.0001") == 1001);
  CHECK(Milli("0.1m") == 1);
  // Towards +inf means towards zero for negative amounts.
  CHECK(Unit("-1.5") == -1);
  CHECK(Unit("-1m") == 0);
  CHECK(Milli("-0.0005") == 0);
}

TEST_CASE("int64 limits are exact and one past them is OutOfRange") {
  CHECK(Unit("9223372036854775807") == kInt64Max);
  CHECK(Milli("9223372036854775807m") == kInt64Max);
  CHECK(Milli("9223372036854775.807") == kInt64Max);
  CHECK(Unit("-9223372036854775808") == kInt64Min);
  CHECK(Unit("-8Ei") == kInt64Min);

  for (std::string_view text :
       {"9223372036854775808", "8Ei", "10E", "1e19", "1e999999",
        "100000000000000000000000000000000000000000000000000", "-9223372036854775809"}) {
    INFO(text);
    absl::Status status = UnitError(text);
    CHECK(absl::IsOutOfRange(status));
    CHECK_THAT(Message(status), Catch::Contains(std::string(text)));
  }
  // The same number can fit as a unit count and overflow as millis.
  CHECK(Unit("9223372036854776") == 9'223'372'036'854'776);
  CHECK(absl::IsOutOfRange(MilliError("9223372036854776")));
  CHECK(absl::IsOutOfRange(MilliError("9223372036854775808m")));
  CHECK(absl::IsOutOfRange(MilliError("1E")));
  CHECK(absl::IsOutOfRange(MilliError("8Ei")));
  // Rounding up past the limit is an overflow too, not a wrap.
  CHECK(absl::IsOutOfRange(UnitError("9223372036854775807.1")));
}

TEST_CASE("malformed quantities are InvalidArgument naming the text") {
  using namespace std::string_view_literals;
  const std::vector<std::string_view> kMalformed = {
      "",    "abc", "1.2.3", "1 Gi", "1KB",  "1Kb",   "1K",  "1ki", "1gi",  "1mi",
      "1MB", "1i",  "--1",   "+-1",  "-+1",  "+",     "-",   ".",   "+.",   "1e",
      "1e+", "1e-", "e3",    "1ee3", "1e3.5", "1e3m", "1Gi3", " 1", "1 ",   "1\n",
      "\t1", "0x10", "1,5",  "1_000", "Gi",  "m",     "nan", "inf", "1\0"sv};
  for (std::string_view text : kMalformed) {
    INFO('"' << text << '"');
    for (QuantityUnit unit : {QuantityUnit::kMilli, QuantityUnit::kUnit}) {
      absl::Status status = ParseQuantity(text, unit).status();
      CHECK(absl::IsInvalidArgument(status));
      CHECK_THAT(Message(status), Catch::Contains(std::string("\"") + std::string(text) + "\""));
    }
  }
  CHECK_THAT(Message(UnitError("")), Catch::Contains("empty"));
  CHECK_THAT(Message(UnitError("1KB")), Catch::Contains("unknown suffix \"KB\""));
  CHECK_THAT(Message(UnitError("1 Gi")), Catch::Contains("unknown suffix \" Gi\""));
}

TEST_CASE("FormatQuantity prints canonical amounts the way Kubernetes would write them") {
  CHECK(FormatQuantity(1500, QuantityUnit::kMilli) == "1500m");
  CHECK(FormatQuantity(2000, QuantityUnit::kMilli) == "2");
  CHECK(FormatQuantity(0, QuantityUnit::kMilli) == "0");
  CHECK(FormatQuantity(-500, QuantityUnit::kMilli) == "-500m");
  CHECK(FormatQuantity(int64_t{4} << 30, QuantityUnit::kUnit) == "4Gi");
  CHECK(FormatQuantity(int64_t{1536} << 20, QuantityUnit::kUnit) == "1536Mi");  // 1.5Gi
  CHECK(FormatQuantity(int64_t{1} << 60, QuantityUnit::kUnit) == "1Ei");
  CHECK(FormatQuantity(1024, QuantityUnit::kUnit) == "1Ki");
  CHECK(FormatQuantity(-1024, QuantityUnit::kUnit) == "-1Ki");
  CHECK(FormatQuantity(1000, QuantityUnit::kUnit) == "1000");
  CHECK(FormatQuantity(1536, QuantityUnit::kUnit) == "1536");
  CHECK(FormatQuantity(3, QuantityUnit::kUnit) == "3");
  CHECK(FormatQuantity(0, QuantityUnit::kUnit) == "0");
  CHECK(FormatQuantity(kInt64Max, QuantityUnit::kUnit) == "9223372036854775807");
}

TEST_CASE("FormatQuantity output parses back to the same amount") {
  std::vector<int64_t> amounts = {0,           1,          -1,        999,
                                  1000,        1001,       1023,      1024,
                                  1025,        1500,       -1500,     int64_t{1} << 30,
                                  3LL << 40,   5LL << 50,  7LL << 60, -(int64_t{1} << 62),
                                  kInt64Max,   kInt64Min,  kInt64Max - 1, kInt64Min + 1,
                                  kInt64Max / 1000 * 1000};
  // A deterministic spread over all magnitudes.
  uint64_t x = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < 2000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    amounts.push_back(static_cast<int64_t>(x) >> (i % 64));
    amounts.push_back(static_cast<int64_t>((x % 1000) << (i % 54)));
  }
  for (int64_t amount : amounts) {
    for (QuantityUnit unit : {QuantityUnit::kMilli, QuantityUnit::kUnit}) {
      std::string text = FormatQuantity(amount, unit);
      auto parsed = ParseQuantity(text, unit);
      INFO(amount << " -> " << text);
      REQUIRE(parsed.ok());
      CHECK(*parsed == amount);
    }
  }
}

}  // namespace
}  // namespace lahar
