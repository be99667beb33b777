#include "cache/cluster_cache.h"

#include <catch2/catch.hpp>

namespace lahar {
namespace {

TEST_CASE("pod index follows the spec's label order, then the name suffix") {
  Pod pod;
  pod.meta.name = "job-worker-7";
  CHECK(PodIndex(pod) == 7);
  pod.meta.labels["volcano.sh/task-index"] = "3";
  CHECK(PodIndex(pod) == 3);
  pod.meta.labels["batch.kubernetes.io/job-completion-index"] = "5";
  CHECK(PodIndex(pod) == 5);
}

TEST_CASE("a task carries its pod's scheduling gates, and an update that removes them is seen") {
  ClusterCache cache;
  Pod pod;
  pod.meta.name = "solo";
  pod.meta.namespace_ = "default";
  pod.meta.uid = "u1";
  pod.scheduler_name = "lahar";
  pod.scheduling_gates = {"example.com/quota"};
  Pod plain = pod;
  plain.meta.name = "plain";
  plain.meta.uid = "u2";
  plain.scheduling_gates.clear();
  cache.UpsertPod(pod);
  cache.UpsertPod(plain);
  ClusterSnapshot before = cache.Snapshot(0);
  REQUIRE(before.tasks.size() == 2);
  const TaskInfo& gated = before.tasks[before.jobs[before.FindJob("default/solo")].tasks.front()];
  const TaskInfo& ungated = before.tasks[before.jobs[before.FindJob("default/plain")].tasks.front()];
  CHECK(gated.gated);
  CHECK(gated.pod->scheduling_gates == std::vector<std::string>{"example.com/quota"});
  CHECK_FALSE(ungated.gated);
  // Gates are a scheduling constraint: the two pods differ in nothing else, yet not in class.
  CHECK(gated.constraint_class != ungated.constraint_class);

  pod.scheduling_gates.clear();  // the pod as a PATCH removing its gates leaves it
  cache.UpsertPod(pod);
  ClusterSnapshot after = cache.Snapshot(1000);
  const TaskInfo& now = after.tasks[after.jobs[after.FindJob("default/solo")].tasks.front()];
  CHECK_FALSE(now.gated);
  CHECK(now.constraint_class == ungated.constraint_class);
}

}  // namespace
}  // namespace lahar
