#include "plugins/sla/sla.h"

#include <optional>

#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

constexpr char kWaitingTimeKey[] = "sla-waiting-time";

class SlaPlugin : public Plugin {
 public:
  explicit SlaPlugin(Millis waiting_time) : waiting_time_(waiting_time) {}

  std::string_view Name() const override { return "sla"; }

  void OnSessionOpen(Session& session) override {
    const Millis now = session.cluster().now;
    const Millis default_limit = waiting_time_;
    auto deadline_of = [default_limit](const JobInfo& job) -> std::optional<Millis> {
      const Millis limit = job.sla_waiting_time >= 0 ? job.sla_waiting_time : default_limit;
      if (limit < 0) return std::nullopt;
      return job.creation_timestamp * 1000 + limit;
    };
    // The job's deadline when it is past it, else nullopt.
    auto overdue_since = [now, deadline_of](const JobInfo& job) -> std::optional<Millis> {
      std::optional<Millis> deadline = deadline_of(job);
      if (!deadline || now < *deadline) return std::nullopt;
      return deadline;
    };
    // Votes and order change when a deadline passes, with nothing else changing.
    for (const JobInfo& job : session.cluster().jobs) {
      if (std::optional<Millis> deadline = deadline_of(job)) session.ExpiresAt(*deadline, job.id);
    }
    // A job without a deadline always abstains; one with a deadline is judged by its age.
    session.AddJobEnqueueableFn([overdue_since](const JobInfo& job) { return overdue_since(job).has_value() ? kPermit : kAbstain; },
                                [deadline_of](const JobInfo& job) { return !deadline_of(job).has_value(); });
    session.AddJobOrderFn([overdue_since](const JobInfo& l, const JobInfo& r) {
      const std::optional<Millis> left = overdue_since(l);
      const std::optional<Millis> right = overdue_since(r);
      if (!left && !right) return 0;
      if (!right) return -1;
      if (!left) return 1;
      return *left < *right ? -1 : (*left > *right ? 1 : 0);
    }, [deadline_of](const JobInfo& job) { return !deadline_of(job).has_value(); },
    [overdue_since](const JobInfo& job, OrderKey& key) {  // the overdue first, the longest overdue first
      const std::optional<Millis> since = overdue_since(job);
      key.AddInteger(since ? 0 : 1);
      key.AddInteger(since.value_or(0));
    });
  }

 private:
  const Millis waiting_time_;  // -1: only annotated jobs have a limit
};

}  // namespace

std::vector<ArgumentSpec> SlaArguments() {
  return {{kWaitingTimeKey, ArgumentKind::kDuration, "", ArgumentSupport::kHonoured,
           "how long any job may wait before it is admitted and ordered first"}};
}

absl::StatusOr<std::unique_ptr<Plugin>> NewSlaPlugin(const Arguments& arguments) {
  ASSIGN_OR_RETURN(Millis waiting_time, arguments.GetDuration(kWaitingTimeKey, -1));
  if (arguments.Has(kWaitingTimeKey) && waiting_time <= 0) {
    return arguments.Error(kWaitingTimeKey, "must be a positive duration");
  }
  return std::make_unique<SlaPlugin>(waiting_time);
}

}  // namespace lahar
