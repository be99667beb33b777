#include "actions/preempt/preempt.h"

#include "api/status_macros.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

class PreemptAction : public Action {
 public:
  std::string_view Name() const override { return "preempt"; }

  void Execute(Session& session) override {
    StarvingJobHandler handler;
    // The order depends on the queue and the priority.
    handler.key = [](QueueId queue, int32_t priority) { return std::pair<int64_t, int64_t>{queue, priority}; };
    handler.policy = [](const JobInfo& job) -> std::optional<VictimPolicy> {
      VictimPolicy policy;
      policy.kind = [queue = job.queue, priority = job.priority](const JobInfo& other) {
        return other.queue == queue && other.priority < priority ? VictimKind::kWholeJob : VictimKind::kNone;
      };
      policy.hooks = VictimPolicy::Hooks::kPreemptable;
      policy.reason = {"preempted-for", &job};
      return policy;
    };
    RelieveStarvingJobs(session, Name(), handler);
  }
};

}  // namespace

std::vector<ArgumentSpec> PreemptArguments() {
  constexpr auto kInt = ArgumentKind::kInt;
  constexpr auto kIgnored = ArgumentSupport::kIgnored;
  return {
      {kPredicateErrorCacheEnable, ArgumentKind::kBool, "true", kIgnored,
       "Lahar always caches predicate verdicts per constraint class"},
      {"enableTopologyAwarePreemption", ArgumentKind::kBool, "false", kIgnored, "Volcano's candidate node search"},
      {"topologyAwarePreemptWorkerNum", kInt, "16", kIgnored, "Volcano's candidate node search"},
      {"minCandidateNodesPercentage", kInt, "10", kIgnored, "Volcano's candidate node search"},
      {"minCandidateNodesAbsolute", kInt, "1", kIgnored, "Volcano's candidate node search"},
      {"maxCandidateNodesAbsolute", kInt, "100", kIgnored, "Volcano's candidate node search"},
  };
}

absl::StatusOr<std::unique_ptr<Action>> NewPreemptAction(const Arguments& arguments) {
  return std::make_unique<PreemptAction>();
}

}  // namespace lahar
