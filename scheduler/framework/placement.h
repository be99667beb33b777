// Whether a task fits a node and why not (FitResult, FitErrors), and how searches for a node go.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_PLACEMENT_H_
#define LAHAR_SCHEDULER_FRAMEWORK_PLACEMENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/cluster_info.h"
#include "api/wait_reason.h"

namespace lahar {

// Why a task does not fit a node. `detail` points into stable storage (a taint key, a label),
// so building a FitResult never allocates.
enum class FitCode : uint8_t {
  kFit,
  kInsufficientResource,  // detail: resource name
  kTooManyPods,
  kNodeUnschedulable,
  kNodeNotReady,
  kNodeSelectorMismatch,
  kNodeAffinityMismatch,
  kUntoleratedTaint,      // detail: the taint
  kElasticLimit,          // elastic workers: no room after pod limits
  // The pod has scheduling gates: a refusal of the pod itself, the same on every node, which
  // explanations put before any node's shortage (FitErrors::gated).
  kSchedulingGated,
  kOther,
};

struct FitResult {
  FitCode code = FitCode::kFit;
  std::string_view detail;
  bool ok() const { return code == FitCode::kFit; }
};

// Counts of fit failures over nodes, for messages like
// "5 nodes have too little nvidia.com/gpu, 2 nodes have taint dedicated=infra".
class FitErrors {
 public:
  void Add(const FitResult& result);
  // Node count per refusal, most common first (equal counts by text, so reasons are stable).
  std::vector<std::pair<std::string, int32_t>> Counts() const;
  // A node had too little of `resource` for a pod asking `need` of it: counted as the refusal
  // "too little <resource>", made into text only by Counts (a full scan adds one per node).
  // Inline: a scan that explains adds one per node.
  void AddTooLittle(ResourceId resource, int64_t need, int32_t node_count = 1) {
    if (resource >= too_little_.size()) too_little_.resize(resource + 1, {0, 0});
    auto& [nodes, pod_need] = too_little_[resource];
    nodes += node_count;
    pod_need = need;
  }
  // The resource the most nodes had too little of (ties to the lower id), with the pod's need.
  std::optional<ResourceShortage> MostShort() const;
  bool empty() const { return counts_.empty() && too_little_.empty(); }
  // The pod was refused for its scheduling gates: no node takes it, whatever the nodes hold.
  // Callers then explain the job with SchedulingGatesReason.
  bool gated() const { return gated_; }

 private:
  std::map<std::string, int> counts_;  // refusals other than AddTooLittle's, by text
  // By resource id: the nodes with too little of it, and the pod's need.
  std::vector<std::pair<int32_t, int64_t>> too_little_;
  bool gated_ = false;
};

// Where a task may go: onto idle resources (allocate) or onto resources being released
// (pipeline, after evictions).
enum class Placement { kIdle, kFutureIdle };

struct NodeSearchOptions {
  // kube-scheduler's adaptive sampling: score at least min_nodes_to_find feasible nodes, and
  // at least percentage of the cluster (0 = adaptive 50 - nodes/125, floored at
  // min_percentage). Small clusters are always searched exhaustively.
  int min_nodes_to_find = 100;
  int min_percentage = 5;
  int percentage = 0;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_PLACEMENT_H_
