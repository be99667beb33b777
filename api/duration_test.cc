#include "api/duration.h"

#include <string>

#include <catch2/catch.hpp>

#include "absl/status/status.h"

namespace lahar {
namespace {

Millis Parse(std::string_view s) { return ParseDuration(s).value(); }

TEST_CASE("Go durations parse to milliseconds") {
  CHECK(Parse("90s") == 90'000);
  CHECK(Parse("10m") == 600'000);
  CHECK(Parse("2h") == 7'200'000);
  CHECK(Parse("1h30m") == 5'400'000);
  CHECK(Parse("1h30m15s") == 5'415'000);
  CHECK(Parse("250ms") == 250);
  CHECK(Parse("1.5h") == 5'400'000);
  CHECK(Parse("0.5s") == 500);
  CHECK(Parse("0s") == 0);
  CHECK(Parse("0") == 0);
  CHECK(Parse("+5s") == 5000);
}

TEST_CASE("a bare number is seconds") {
  CHECK(Parse("30") == 30'000);
  CHECK(Parse("1.5") == 1500);
  CHECK(Parse("0.25") == 250);
  CHECK(Parse("0.29") == 290);  // 0.29 * 1000 is 290.00000000000006 in binary
  CHECK(Parse("1.001") == 1001);
  CHECK(Parse("86400") == 86'400'000);
}

TEST_CASE("sub-millisecond parts round up") {
  CHECK(Parse("1us") == 1);
  CHECK(Parse("1ns") == 1);
  CHECK(Parse("1500us") == 2);
  CHECK(Parse("1ms1ns") == 2);
  CHECK(Parse("0.0001") == 1);
  CHECK(Parse("0.0015") == 2);
}

TEST_CASE("negative, infinite and malformed durations are rejected") {
  for (std::string_view text :
       {"", "-1", "-1s", "-1h30m", "-0.5", "abc", "inf", "-inf", "+inf", "Inf", "nan", "NaN",
        "1e3", "10x", "5d", "1h 30m", "1 s", "s", "h1", "1.2.3s", "1e999", "99999999999999",
        "100000000h"}) {
    INFO('"' << text << '"');
    auto parsed = ParseDuration(text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(absl::IsInvalidArgument(parsed.status()));
    CHECK_THAT(std::string(parsed.status().message()),
               Catch::Contains(std::string("\"") + std::string(text) + "\""));
  }
  CHECK_THAT(std::string(ParseDuration("-1s").status().message()), Catch::Contains("negative"));
}

TEST_CASE("FormatDuration writes the largest whole units") {
  CHECK(FormatDuration(0) == "0s");
  CHECK(FormatDuration(90'000) == "1m30s");
  CHECK(FormatDuration(5'400'000) == "1h30m");
  CHECK(FormatDuration(3'600'000) == "1h");
  CHECK(FormatDuration(600'000) == "10m");
  CHECK(FormatDuration(250) == "250ms");
  CHECK(FormatDuration(45'000) == "45s");
  CHECK(FormatDuration(-90'000) == "-1m30s");
}

TEST_CASE("FormatDuration output parses back to the same duration") {
  for (Millis millis : {Millis{0}, Millis{1}, Millis{999}, Millis{1000}, Millis{1001},
                        Millis{1500}, Millis{59'999}, Millis{61'500}, Millis{3'600'001},
                        Millis{3'601'000}, Millis{86'400'000}, Millis{90'061'001}}) {
    std::string text = FormatDuration(millis);
    INFO(millis << " -> " << text);
    auto parsed = ParseDuration(text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == millis);
  }
}

}  // namespace
}  // namespace lahar
