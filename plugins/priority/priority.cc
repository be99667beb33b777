#include "plugins/priority/priority.h"

#include <vector>

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

// <0 when `l` goes first: the higher value.
int HigherFirst(int32_t l, int32_t r) { return l > r ? -1 : (l < r ? 1 : 0); }

class PriorityPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "priority"; }

  void OnSessionOpen(Session& session) override {
    // The priority is an admission fact: jobs alike have the same.
    session.AddJobOrderFn([](const JobInfo& l, const JobInfo& r) { return HigherFirst(l.priority, r.priority); },
                          [](const JobInfo&) { return true; },
                          [](const JobInfo& job, OrderKey& key) { key.AddInteger(job.priority, /*higher_first=*/true); });
    session.AddTaskOrderFn([](const TaskInfo& l, const TaskInfo& r) {
      return HigherFirst(l.task_priority, r.task_priority);
    });
    const Session* s = &session;
    session.AddPreemptableFn([s](const TaskInfo& preemptor, const std::vector<TaskId>& candidates) {
      const JobInfo& preemptor_job = s->job(preemptor.job);
      std::vector<TaskId> victims;
      for (TaskId id : candidates) {
        const TaskInfo& candidate = s->task(id);
        const bool allowed = candidate.job == preemptor.job
                                 ? candidate.task_priority < preemptor.task_priority
                                 : s->job(candidate.job).priority < preemptor_job.priority;
        if (allowed) victims.push_back(id);
      }
      return victims;
    });
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewPriorityPlugin(const Arguments& arguments) {
  return std::make_unique<PriorityPlugin>();
}

}  // namespace lahar
