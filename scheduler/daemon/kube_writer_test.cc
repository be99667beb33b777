#include "scheduler/daemon/kube_writer.h"

#include "api/quantity.h"
#include "catch2/catch.hpp"

namespace lahar {
namespace {

Resources Parse(std::initializer_list<std::pair<const char*, const char*>> list) {
  Resources r;
  for (const auto& [name, text] : list) {
    ResourceId id = InternResource(name);
    r.Set(id, ParseQuantity(text, ResourceUnit(id)).value());
  }
  return r;
}

TEST_CASE("PodGroup status patch: Volcano's fields, one condition") {
  PodGroupStatus status{PodGroupPhase::kPending, "Unschedulable", "NotEnoughResources",
                        "3/8 pods of gang unschedulable: 5 nodes have too little nvidia.com/gpu", 0, 1, 2};
  CHECK(PodGroupStatusPatch(status, "2026-11-23T05:00:00Z") ==
        R"({"status":{"phase":"Pending","conditions":[{"type":"Unschedulable","status":"True",)"
        R"("reason":"NotEnoughResources","message":"3/8 pods of gang unschedulable: 5 nodes have too little )"
        R"(nvidia.com/gpu","lastTransitionTime":"2026-11-23T05:00:00Z"}],"running":0,"succeeded":1,"failed":2}})");
  status.condition_type.clear();
  CHECK(PodGroupStatusPatch(status, "t").find(R"("conditions":[])") != std::string::npos);
}

TEST_CASE("Queue allocated patch: quantities, and null for what is no longer allocated") {
  Resources now = Parse({{"cpu", "1500m"}, {"memory", "8Gi"}});
  Resources before = Parse({{"cpu", "1"}, {"nvidia.com/gpu", "2"}});
  CHECK(QueueAllocatedPatch(now, before) ==
        R"({"status":{"allocated":{"cpu":"1500m","memory":"8Gi","nvidia.com/gpu":null}}})");
}

TEST_CASE("times are RFC 3339 in UTC") {
  CHECK(RfcTime(1'700'000'000'123'456) == "2023-11-14T22:13:20Z");
  CHECK(RfcMicroTime(1'700'000'000'123'456) == "2023-11-14T22:13:20.123456Z");
}

}  // namespace
}  // namespace lahar
