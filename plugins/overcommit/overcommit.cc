#include "plugins/overcommit/overcommit.h"

#include <cmath>
#include <optional>
#include <string>

#include "api/quantity.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

constexpr char kFactorKey[] = "overcommit-factor";
constexpr double kDefaultFactor = 1.2;

class OvercommitPlugin : public Plugin {
 public:
  explicit OvercommitPlugin(double factor) : factor_(factor) {}
  std::string_view Name() const override { return "overcommit"; }

  void OnSessionOpen(Session& session) override {
    allocatable_ = Resources();
    admitted_ = Resources();
    for (const NodeInfo& node : session.cluster().nodes) {
      allocatable_ += node.allocatable;
      admitted_ += node.used;  // every pod, other schedulers' included
    }
    for (JobId id : session.LiveJobs()) {  // a Pending job is not admitted
      const JobInfo& job = session.job(id);
      if (!job.has_pod_group || !IsAdmitted(job)) continue;
      admitted_ += AdmissionRequest(session, job);  // what it still lacks of its min
    }
    // Admitted jobs left out lack what their representative, alike and holding nothing, does.
    for (const Session::ParkedAdmitted& parked : session.parked_admitted()) {
      Resources lacking = AdmissionRequest(session, session.job(parked.representative));
      lacking *= parked.members;
      admitted_ += lacking;
    }
    session.AddClusterAdmissionFn(
        [this](const JobInfo& job, const Resources& need) -> std::optional<WaitReason> {
          if (job.min_resources.IsZero()) return std::nullopt;  // as Volcano: nothing to count
          return Refusal(need);
        },
        [](const JobInfo&) { return true; });
    session.AddJobEnqueuedFn([this](const JobInfo&, const Resources& need) { admitted_ += need; });
  }

 private:
  std::optional<WaitReason> Refusal(const Resources& need) const {
    for (const auto& [id, amount] : need.NonZero()) {
      const double limit = static_cast<double>(allocatable_.Get(id)) * factor_;
      const int64_t total = admitted_.Get(id) + amount;
      if (static_cast<double>(total) <= limit) continue;
      return WaitReason{.kind = WaitKind::kAdmission,
                        .subject = "overcommit",
                        .limit = "minResources",
                        .shortage = ResourceShortage{id, allocatable_.Get(id), admitted_.Get(id), amount},
                        .factor = factor_};
    }
    return std::nullopt;
  }

  const double factor_;
  Resources allocatable_;
  Resources admitted_;  // in use, plus what admitted jobs still lack of their min
};

}  // namespace

std::vector<ArgumentSpec> OvercommitArguments() {
  return {{kFactorKey, ArgumentKind::kNumber, "1.2", ArgumentSupport::kHonoured,
           "admitted minResources may reach allocatable times this factor"}};
}

absl::StatusOr<std::unique_ptr<Plugin>> NewOvercommitPlugin(const Arguments& arguments) {
  ASSIGN_OR_RETURN(double factor, arguments.GetDouble(kFactorKey, kDefaultFactor, 0, 1000));
  if (factor <= 0) return arguments.Error(kFactorKey, "must be greater than 0");
  return std::make_unique<OvercommitPlugin>(factor);
}

}  // namespace lahar
