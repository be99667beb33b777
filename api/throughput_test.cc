#include "api/throughput.h"

#include <string>

#include <catch2/catch.hpp>

namespace lahar {
namespace {

TEST_CASE("throughput annotations parse to points sorted by size") {
  auto points = ParseThroughput(" 3=18.5, 1=10 ,2 = 18");
  REQUIRE(points.ok());
  REQUIRE(points->size() == 3);
  CHECK((*points)[0] == ThroughputPoint{1, 10});
  CHECK((*points)[1] == ThroughputPoint{2, 18});
  CHECK((*points)[2] == ThroughputPoint{3, 18.5});
  CHECK(FormatThroughput(*points) == "1=10,2=18,3=18.5");
}

TEST_CASE("an empty throughput annotation is a job that has not reported yet") {
  CHECK(ParseThroughput("")->empty());
  CHECK(ParseThroughput("  ")->empty());
  CHECK(FormatThroughput({}).empty());
}

TEST_CASE("bad throughput annotations name what is wrong") {
  auto message = [](std::string_view text) { return std::string(ParseThroughput(text).status().message()); };
  CHECK(message("1=10,2") == "\"2\" is not size=throughput");
  CHECK(message("0=10") == "\"0=10\": the size is not a positive integer");
  CHECK(message("two=10") == "\"two=10\": the size is not a positive integer");
  CHECK(message("1=-3") == "\"1=-3\": the throughput is not a finite non-negative number");
  CHECK(message("1=nan") == "\"1=nan\": the throughput is not a finite non-negative number");
  CHECK(message("1=inf") == "\"1=inf\": the throughput is not a finite non-negative number");
  CHECK(message("1=0x10") == "\"1=0x10\": the throughput is not a finite non-negative number");
  CHECK(message("1=10,,2=3") == "\"\" is not size=throughput");
  CHECK(message("1=10,1=11") == "size 1 is reported twice");
}

TEST_CASE("formatted rates read back exactly") {
  std::vector<ThroughputPoint> points{{1, 0.1}, {2, 1.0 / 3.0}, {4, 123456789.25}, {8, 0}};
  auto back = ParseThroughput(FormatThroughput(points));
  REQUIRE(back.ok());
  CHECK(*back == points);
}

}  // namespace
}  // namespace lahar
