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
                        "3/8 pods unschedulable: 5 nodes have too little nvidia.com/gpu", 0, 1, 2};
  CHECK(PodGroupStatusPatch(status, "2026-11-23T05:00:00Z") ==
        R"({"status":{"phase":"Pending","conditions":[{"type":"Unschedulable","status":"True",)"
        R"("reason":"NotEnoughResources","message":"3/8 pods unschedulable: 5 nodes have too little )"
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

TEST_CASE("Events about the scheduler: on its Pod when the downward API names it, else on its Lease") {
  LeaderElectionConfig lease;
  lease.namespace_ = "lahar-system";
  lease.name = "lahar";
  EventSpec on_pod = SchedulerEvent("lahar-system", "lahar-scheduler-7d9f", lease, "ConfigRejected", "line 3: ...");
  CHECK(on_pod.kind == "Pod");
  CHECK(on_pod.api_version == "v1");
  CHECK(on_pod.namespace_ == "lahar-system");
  CHECK(on_pod.object_namespace == "lahar-system");
  CHECK(on_pod.name == "lahar-scheduler-7d9f");
  CHECK(on_pod.type == "Warning");
  CHECK(on_pod.reason == "ConfigRejected");
  CHECK(on_pod.message == "line 3: ...");
  for (auto [ns, name] : {std::pair{"", ""}, std::pair{"lahar-system", ""}, std::pair{"", "lahar-scheduler-7d9f"}}) {
    EventSpec on_lease = SchedulerEvent(ns, name, lease, "ConfigRejected", "line 3: ...");
    CHECK(on_lease.kind == "Lease");
    CHECK(on_lease.api_version == "coordination.k8s.io/v1");
    CHECK(on_lease.namespace_ == "lahar-system");  // an Event lives in its object's namespace
    CHECK(on_lease.object_namespace == "lahar-system");
    CHECK(on_lease.name == "lahar");
  }
}

}  // namespace
}  // namespace lahar
