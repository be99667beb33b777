#include "scheduler/framework/per_job.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

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

TEST_CASE("values kept in a vector are found by job as in a deque, and a reset forgets all") {
  PerJob<std::string, std::vector<std::string>> values;
  values.Reset(5);
  for (JobId job : {4, 0, 2}) values[job] = "job " + std::to_string(job);
  CHECK(values.Find(1) == nullptr);
  CHECK(values.Find(3) == nullptr);
  for (JobId job : {0, 2, 4}) {
    REQUIRE(values.Find(job) != nullptr);
    CHECK(*values.Find(job) == "job " + std::to_string(job));
  }
  values[2] += " again";  // asked again: the same value, not a new one
  CHECK(*values.Find(2) == "job 2 again");
  CHECK(values.TryEmplace(3, "made") == "made");   // made from its arguments
  CHECK(values.TryEmplace(2, "other") == "job 2 again");  // a made one is left as it is
  values.Reset(5);
  CHECK(values.Find(4) == nullptr);
  CHECK(values[4].empty());
}

}  // namespace
}  // namespace lahar
