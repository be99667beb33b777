#include "plugins/predicates/predicates.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

constexpr char kNodeNameField[] = "metadata.name";
constexpr std::string_view kNodeAffinityEnable = "predicate.NodeAffinityEnable";
constexpr std::string_view kTaintTolerationEnable = "predicate.TaintTolerationEnable";

// Volcano's switches for the checks Lahar makes.
struct PredicateOptions {
  bool node_affinity = true;     // nodeSelector and required node affinity
  bool taint_toleration = true;  // NoSchedule / NoExecute taints
};

// Cached per (constraint class, node): 0 not computed yet, else a Verdict.
enum Verdict : int16_t {
  kUnknown = 0,
  kFits = 1,
  kSelectorMismatch = 2,
  kAffinityMismatch = 3,
  kFirstTaint = 4,  // kFirstTaint + i: the node's taint i is not tolerated
};

bool MatchesTerm(const NodeSelectorTerm& term, const Node& node) {
  // Kubernetes: a term without requirements matches no node.
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& requirement : term.match_expressions) {
    if (!MatchesRequirement(requirement, node.meta.labels)) return false;
  }
  if (!term.match_fields.empty()) {
    const StringMap fields = {{kNodeNameField, node.meta.name}};
    for (const auto& requirement : term.match_fields) {
      if (requirement.key != kNodeNameField) return false;  // the only field Kubernetes defines
      if (!MatchesRequirement(requirement, fields)) return false;
    }
  }
  return true;
}

bool ScheduleBlocking(const Taint& taint) { return taint.effect == "NoSchedule" || taint.effect == "NoExecute"; }

class PredicatesPlugin : public Plugin {
 public:
  explicit PredicatesPlugin(PredicateOptions options) : options_(options) {}
  std::string_view Name() const override { return "predicates"; }

  void OnSessionOpen(Session& session) override {
    node_count_ = session.cluster().nodes.size();
    session.AddPredicateFn([this](const TaskInfo& task, const NodeInfo& node) { return Check(task, node); });
  }

 private:
  FitResult Check(const TaskInfo& task, const NodeInfo& node) {
    // Gates first: the pod waits for them whatever the node, and that is what it is told.
    if (task.gated) return {FitCode::kSchedulingGated, {}};
    const Node& n = *node.node;
    if (n.unschedulable) return {FitCode::kNodeUnschedulable, {}};
    if (!n.ready) return {FitCode::kNodeNotReady, {}};
    const auto cls = static_cast<size_t>(std::max(0, task.constraint_class));
    if (cls >= cache_.size()) cache_.resize(cls + 1);
    std::vector<int16_t>& row = cache_[cls];
    if (row.empty()) row.assign(node_count_, kUnknown);
    int16_t& verdict = row[node.id];
    if (verdict == kUnknown) verdict = Evaluate(*task.pod, n);
    switch (verdict) {
      case kFits: return {};
      case kSelectorMismatch: return {FitCode::kNodeSelectorMismatch, {}};
      case kAffinityMismatch: return {FitCode::kNodeAffinityMismatch, {}};
      default: return {FitCode::kUntoleratedTaint, TaintTexts(node)[verdict - kFirstTaint]};
    }
  }

  // A node's taints as FitResult details name them, made when a pod first fails on one of them
  // (most sessions never do, and every session opens over every node).
  const std::vector<std::string>& TaintTexts(const NodeInfo& node) {
    auto [it, inserted] = taint_text_.try_emplace(node.id);
    if (inserted) {
      for (const Taint& taint : node.node->taints) {
        it->second.push_back(StrCat(taint.key, taint.value.empty() ? "" : "=", taint.value));
      }
    }
    return it->second;
  }

  int16_t Evaluate(const Pod& pod, const Node& node) const {
    if (options_.node_affinity) {
      if (!MatchesLabels(pod.node_selector, node.meta.labels)) return kSelectorMismatch;
      if (!MatchesNodeAffinity(pod.required_node_affinity, node)) return kAffinityMismatch;
    }
    if (!options_.taint_toleration) return kFits;
    for (size_t i = 0; i < node.taints.size(); ++i) {
      const Taint& taint = node.taints[i];
      if (!ScheduleBlocking(taint)) continue;
      const bool tolerated = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                                         [&](const Toleration& t) { return Tolerates(t, taint); });
      // int16_t leaves room for 32k taints; a node with more is not a real node.
      if (!tolerated) return static_cast<int16_t>(kFirstTaint + std::min<size_t>(i, 30000));
    }
    return kFits;
  }

  const PredicateOptions options_;
  size_t node_count_ = 0;
  std::vector<std::vector<int16_t>> cache_;          // [constraint class][node id] -> Verdict
  // [node id][taint]: FitResult details, which must stay put for the session (a map's entries do).
  std::map<NodeId, std::vector<std::string>> taint_text_;
};

}  // namespace

bool MatchesNodeAffinity(const std::vector<NodeSelectorTerm>& terms, const Node& node) {
  if (terms.empty()) return true;
  return std::any_of(terms.begin(), terms.end(), [&](const NodeSelectorTerm& t) { return MatchesTerm(t, node); });
}

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.operator_ == "Exists") return true;
  if (toleration.operator_.empty() || toleration.operator_ == "Equal") return toleration.value == taint.value;
  return false;
}

std::vector<ArgumentSpec> PredicatesArguments() {
  constexpr auto kBool = ArgumentKind::kBool;
  constexpr auto kInt = ArgumentKind::kInt;
  constexpr auto kIgnored = ArgumentSupport::kIgnored;
  return {
      {kNodeAffinityEnable, kBool, "true", ArgumentSupport::kHonoured, "check nodeSelector and required node affinity"},
      {kTaintTolerationEnable, kBool, "true", ArgumentSupport::kHonoured, "check NoSchedule / NoExecute taints"},
      // Volcano's switches and settings of checks Lahar does not make.
      {"predicate.NodePortsEnable", kBool, "true", kIgnored, "host ports"},
      {"predicate.PodAffinityEnable", kBool, "true", kIgnored, "inter-pod affinity"},
      {"predicate.NodeVolumeLimitsEnable", kBool, "true", kIgnored, "volume limits"},
      {"predicate.VolumeZoneEnable", kBool, "true", kIgnored, "volume zones"},
      {"predicate.PodTopologySpreadEnable", kBool, "true", kIgnored, "topology spread"},
      {"predicate.VolumeBindingEnable", kBool, "true", kIgnored, "volume binding"},
      {"predicate.CacheEnable", kBool, "false", kIgnored, "Lahar always caches verdicts per constraint class"},
      {"predicate.DynamicResourceAllocationEnable", kBool, "false", kIgnored, "DRA"},
      {"predicate.GPUSharingEnable", kBool, "false", kIgnored, "older Volcano releases"},
      {"predicate.GPUNumberEnable", kBool, "false", kIgnored, "older Volcano releases"},
      {"predicate.ProportionalEnable", kBool, "false", kIgnored, "older Volcano releases"},
      {"predicate.resources", ArgumentKind::kString, "", kIgnored, "older Volcano releases"},
      {"predicate.resources.*", ArgumentKind::kNumber, "", kIgnored, "older Volcano releases"},
      {"volumebinding.weight", kInt, "1", kIgnored, "volume binding"},
      {"volumebinding.bindTimeoutSeconds", kInt, "600", kIgnored, "volume binding"},
      {"volumebinding.shape", ArgumentKind::kStructured, "", kIgnored, "volume binding"},
      {"dynamicresources.filterTimeoutSeconds", kInt, "10", kIgnored, "DRA"},
  };
}

absl::StatusOr<std::unique_ptr<Plugin>> NewPredicatesPlugin(const Arguments& arguments) {
  PredicateOptions options;
  ASSIGN_OR_RETURN(options.node_affinity, arguments.GetBool(kNodeAffinityEnable, true));
  ASSIGN_OR_RETURN(options.taint_toleration, arguments.GetBool(kTaintTolerationEnable, true));
  return std::make_unique<PredicatesPlugin>(options);
}

}  // namespace lahar
