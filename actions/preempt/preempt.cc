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
    handler.policy = [](const JobInfo& job, std::pair<int64_t, int64_t>& key) -> std::optional<VictimPolicy> {
      key.second = job.priority;  // the order depends on the queue and the priority
      VictimPolicy policy;
      policy.kind = [queue = job.queue, priority = job.priority](const JobInfo& other) {
        return other.queue == queue && other.priority < priority ? VictimKind::kWholeJob : VictimKind::kNone;
      };
      policy.hooks = VictimPolicy::Hooks::kPreemptable;
      policy.reason = EvictionReason("preempted-for", job);
      return policy;
    };
    RelieveStarvingJobs(session, Name(), handler);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewPreemptAction(const Arguments& arguments) {
  RETURN_IF_ERROR(arguments.ExpectNone());
  return std::make_unique<PreemptAction>();
}

}  // namespace lahar
