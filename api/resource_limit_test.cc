// A process of its own: this test fills the process-wide resource name table to its limit.
#include <catch2/catch.hpp>
#include <string>

#include "api/resources.h"

namespace lahar {
namespace {

TEST_CASE("input cannot exhaust resource ids: new names are refused past the limit") {
  CHECK_FALSE(InternInputResource("").ok());
  CHECK(InternInputResource("cpu").value() == kCpu);
  // Fill the table up to the limit with fresh names, then one more is refused while known names
  // still resolve.
  size_t i = 0;
  while (ResourceCount() < kMaxResourceNames) {
    REQUIRE(InternInputResource("example.com/filler-" + std::to_string(i++)).ok());
  }
  auto refused = InternInputResource("example.com/one-too-many");
  REQUIRE_FALSE(refused.ok());
  CHECK(std::string(refused.status().message()).find("too many distinct resource names") != std::string::npos);
  CHECK(InternInputResource("nvidia.com/gpu").value() == kNvidiaGpu);
}

}  // namespace
}  // namespace lahar
