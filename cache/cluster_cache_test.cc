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

}  // namespace
}  // namespace lahar
