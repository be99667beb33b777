#include "plugins/binpack/binpack.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

constexpr double kMaxNodeScore = 100;
constexpr int64_t kMaxWeight = 1'000'000;
constexpr std::string_view kWeight = "binpack.weight";

class BinpackPlugin : public Plugin {
 public:
  explicit BinpackPlugin(BinpackWeights weights) : weights_(std::move(weights)) {}
  std::string_view Name() const override { return "binpack"; }

  void OnSessionOpen(Session& session) override {
    if (weights_.weight == 0) return;
    session.AddNodeOrderFn(
        [this](const TaskInfo& task, const NodeInfo& node) { return BinpackScore(task, node, weights_); });
  }

 private:
  BinpackWeights weights_;
};

// Sets the weight of `id`, replacing an earlier one.
void SetWeight(std::vector<std::pair<ResourceId, int64_t>>& weights, ResourceId id, int64_t weight) {
  for (auto& [existing, w] : weights) {
    if (existing == id) {
      w = weight;
      return;
    }
  }
  weights.emplace_back(id, weight);
}

}  // namespace

absl::StatusOr<std::vector<std::pair<ResourceId, int64_t>>> ParseResourceWeights(const Arguments& arguments,
                                                                                 std::string_view prefix) {
  std::vector<std::pair<ResourceId, int64_t>> weights;
  ASSIGN_OR_RETURN(int64_t cpu, arguments.GetInt(StrCat(prefix, "cpu"), 1, 0, kMaxWeight));
  ASSIGN_OR_RETURN(int64_t memory, arguments.GetInt(StrCat(prefix, "memory"), 1, 0, kMaxWeight));
  SetWeight(weights, kCpu, cpu);
  SetWeight(weights, kMemory, memory);

  const std::string list_key = StrCat(prefix, "resources");
  const std::string resource_prefix = StrCat(list_key, ".");
  ASSIGN_OR_RETURN(std::string list, arguments.GetString(list_key, ""));
  std::vector<std::string> listed;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    const std::string name(absl::StripAsciiWhitespace(item));
    if (name.empty()) continue;
    const std::string key = StrCat(resource_prefix, name);
    ASSIGN_OR_RETURN(int64_t weight, arguments.GetInt(key, 1, 0, kMaxWeight));
    SetWeight(weights, InternResource(name), weight);
    listed.push_back(key);
  }

  // Volcano would silently skip such a weight; here it is named, as a likely slip.
  for (const auto& [key, value] : arguments.values()) {
    const std::string_view k = key;
    if (k.substr(0, resource_prefix.size()) != resource_prefix) continue;
    if (std::find(listed.begin(), listed.end(), key) != listed.end()) continue;
    return arguments.Error(key, StrCat("resource ", k.substr(resource_prefix.size()), " is not listed in ", list_key));
  }
  return weights;
}

absl::StatusOr<BinpackWeights> ParseBinpackWeights(const Arguments& arguments) {
  BinpackWeights weights;
  ASSIGN_OR_RETURN(weights.weight, arguments.GetInt(kWeight, 1, 0, kMaxWeight));
  ASSIGN_OR_RETURN(weights.resources, ParseResourceWeights(arguments, "binpack."));
  return weights;
}

double BinpackScore(const TaskInfo& task, const NodeInfo& node, const BinpackWeights& weights) {
  double score = 0;
  int64_t weight_sum = 0;
  for (const auto& [id, weight] : weights.resources) {
    const int64_t request = task.request.Get(id);
    if (request <= 0) continue;
    weight_sum += weight;
    const int64_t allocatable = node.allocatable.Get(id);
    if (allocatable <= 0 || weight == 0) continue;
    const int64_t used = node.used.Get(id) + request;
    if (used > allocatable) return 0;
    score += static_cast<double>(weight) * static_cast<double>(used) / static_cast<double>(allocatable);
  }
  if (weight_sum > 0) score /= static_cast<double>(weight_sum);
  return score * kMaxNodeScore * static_cast<double>(weights.weight);
}

std::vector<ArgumentSpec> BinpackArguments() {
  return {
      {kWeight, ArgumentKind::kInt, "1", ArgumentSupport::kHonoured, "weight of the binpack score"},
      {"binpack.cpu", ArgumentKind::kInt, "1", ArgumentSupport::kHonoured, "weight of cpu"},
      {"binpack.memory", ArgumentKind::kInt, "1", ArgumentSupport::kHonoured, "weight of memory"},
      {"binpack.resources", ArgumentKind::kString, "", ArgumentSupport::kHonoured,
       "comma-separated further resources to pack"},
      {"binpack.resources.*", ArgumentKind::kInt, "1", ArgumentSupport::kHonoured,
       "weight of a resource listed in binpack.resources"},
  };
}

absl::StatusOr<std::unique_ptr<Plugin>> NewBinpackPlugin(const Arguments& arguments) {
  ASSIGN_OR_RETURN(BinpackWeights weights, ParseBinpackWeights(arguments));
  return std::make_unique<BinpackPlugin>(std::move(weights));
}

}  // namespace lahar
