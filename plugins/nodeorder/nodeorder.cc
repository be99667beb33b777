#include "plugins/nodeorder/nodeorder.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

constexpr double kMaxNodeScore = 100;
constexpr int64_t kMaxWeight = 1'000'000;

constexpr std::string_view kLeastRequested = "leastrequested.weight";
constexpr std::string_view kBalancedResource = "balancedresource.weight";
constexpr std::string_view kMostRequested = "mostrequested.weight";

struct Weights {
  int64_t least_requested = 1;
  int64_t balanced_resource = 1;
  int64_t most_requested = 0;
};

// Mean over cpu and memory (those the node has) of score(requested, allocatable).
template <typename Score>
double MeanOverCpuMemory(const TaskInfo& task, const NodeInfo& node, Score score) {
  double sum = 0;
  int count = 0;
  for (ResourceId id : {kCpu, kMemory}) {
    const int64_t allocatable = node.allocatable.Get(id);
    if (allocatable <= 0) continue;
    const int64_t requested = node.used.Get(id) + task.request.Get(id);
    sum += score(static_cast<double>(requested), static_cast<double>(allocatable));
    ++count;
  }
  return count == 0 ? 0 : sum / count;
}

class NodeorderPlugin : public Plugin {
 public:
  explicit NodeorderPlugin(Weights weights) : weights_(weights) {}
  std::string_view Name() const override { return "nodeorder"; }

  void OnSessionOpen(Session& session) override {
    if (weights_.least_requested == 0 && weights_.balanced_resource == 0 && weights_.most_requested == 0) return;
    session.AddNodeOrderFn([w = weights_](const TaskInfo& task, const NodeInfo& node) {
      double score = 0;
      if (w.least_requested != 0) {
        score += static_cast<double>(w.least_requested) * LeastAllocatedScore(task, node);
      }
      if (w.balanced_resource != 0) {
        score += static_cast<double>(w.balanced_resource) * BalancedAllocationScore(task, node);
      }
      if (w.most_requested != 0) {
        score += static_cast<double>(w.most_requested) * MostAllocatedScore(task, node);
      }
      return score;
    });
  }

 private:
  Weights weights_;
};

}  // namespace

double LeastAllocatedScore(const TaskInfo& task, const NodeInfo& node) {
  return MeanOverCpuMemory(task, node, [](double requested, double allocatable) {
    return requested > allocatable ? 0.0 : (allocatable - requested) * kMaxNodeScore / allocatable;
  });
}

double MostAllocatedScore(const TaskInfo& task, const NodeInfo& node) {
  return MeanOverCpuMemory(task, node, [](double requested, double allocatable) {
    return std::min(requested, allocatable) * kMaxNodeScore / allocatable;
  });
}

double BalancedAllocationScore(const TaskInfo& task, const NodeInfo& node) {
  double fractions[3];
  int n = 0;
  for (ResourceId id : {kCpu, kMemory, kNvidiaGpu}) {
    // Extended resources count only when the pod asks for them, as in kube-scheduler.
    if (id == kNvidiaGpu && task.request.Get(id) <= 0) continue;
    const int64_t allocatable = node.allocatable.Get(id);
    if (allocatable <= 0) continue;
    const int64_t requested = node.used.Get(id) + task.request.Get(id);
    fractions[n++] = std::min(1.0, static_cast<double>(requested) / static_cast<double>(allocatable));
  }
  double deviation = 0;
  if (n == 2) {
    deviation = std::abs(fractions[0] - fractions[1]) / 2;
  } else if (n > 2) {
    double mean = 0;
    for (int i = 0; i < n; ++i) mean += fractions[i];
    mean /= n;
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
    deviation = std::sqrt(sum / n);
  }
  return (1 - deviation) * kMaxNodeScore;
}

std::vector<ArgumentSpec> NodeorderArguments() {
  constexpr auto kInt = ArgumentKind::kInt;
  constexpr auto kIgnored = ArgumentSupport::kIgnored;
  return {
      {kLeastRequested, kInt, "1", ArgumentSupport::kHonoured, "weight of the least-requested score"},
      {kBalancedResource, kInt, "1", ArgumentSupport::kHonoured, "weight of the balanced-resource score"},
      {kMostRequested, kInt, "0", ArgumentSupport::kHonoured, "weight of the most-requested score"},
      // Volcano's weights of scores Lahar does not compute.
      {"nodeaffinity.weight", kInt, "2", kIgnored, "preferred node affinity"},
      {"podaffinity.weight", kInt, "2", kIgnored, "inter-pod affinity"},
      {"tainttoleration.weight", kInt, "3", kIgnored, "PreferNoSchedule taints"},
      {"imagelocality.weight", kInt, "1", kIgnored, "images already on the node"},
      {"podtopologyspread.weight", kInt, "2", kIgnored, "topology spread constraints"},
      {"selectorspread.weight", kInt, "0", kIgnored, "older Volcano releases"},
  };
}

absl::StatusOr<std::unique_ptr<Plugin>> NewNodeorderPlugin(const Arguments& arguments) {
  Weights w;
  ASSIGN_OR_RETURN(w.least_requested, arguments.GetInt(kLeastRequested, w.least_requested, 0, kMaxWeight));
  ASSIGN_OR_RETURN(w.balanced_resource, arguments.GetInt(kBalancedResource, w.balanced_resource, 0, kMaxWeight));
  ASSIGN_OR_RETURN(w.most_requested, arguments.GetInt(kMostRequested, w.most_requested, 0, kMaxWeight));
  return std::make_unique<NodeorderPlugin>(w);
}

}  // namespace lahar
