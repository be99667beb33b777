#include "scheduler/framework/per_job.h"

#include <catch2/catch.hpp>

#include <string>

namespace lahar {
namespace {

TEST_CASE("a job's value is made when first asked for, stays where it is, and a reset forgets all") {
  PerJob<std::string> values;
  values.Reset(4);
  CHECK(values.Find(2) == nullptr);
  std::string& first = values[2];
  CHECK(first.empty());  // made as T()
  first = "two";
  for (JobId job : {0, 1, 3}) values[job] = std::to_string(job);
  CHECK(&values[2] == &first);  // others made since did not move it
  REQUIRE(values.Find(2) != nullptr);
  CHECK(*values.Find(2) == "two");
  CHECK(*values.Find(3) == "3");
  values.Reset(4);
  CHECK(values.Find(2) == nullptr);
  CHECK(values[2].empty());
}

}  // namespace
}  // namespace lahar
