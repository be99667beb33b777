#include "plugins/gang/gang.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include "api/log.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

bool Valid(TaskStatus s) { return s != TaskStatus::kFailed; }
bool Ready(TaskStatus s) { return IsPlaced(s) || s == TaskStatus::kSucceeded; }
bool ReadyOrPipelined(TaskStatus s) { return Ready(s) || s == TaskStatus::kPipelined; }

int32_t ReadyCount(const JobInfo& job, bool count_pipelined) {
  return job.ReadyCount() + (count_pipelined ? job.Count(TaskStatus::kPipelined) : 0);
}

// Ready by counts alone (no per-role check): what Volcano's job order looks at.
bool CountReady(const JobInfo& job) { return job.ReadyCount() >= job.min_available; }

class GangPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "gang"; }

  void OnSessionOpen(Session& session) override {
    const Session* s = &session;
    session.AddJobValidFn([s](const JobInfo& job) { return GangInvalidReason(job, s->cluster().tasks); });
    session.AddJobReadyFn([s](const JobInfo& job) { return GangReady(job, s->cluster().tasks); });
    session.AddJobPipelinedFn([s](const JobInfo& job) {
      return GangReady(job, s->cluster().tasks, /*count_pipelined=*/true) ? kPermit : kReject;
    });
    session.AddJobStarvingFn(
        [s](const JobInfo& job) { return !GangReady(job, s->cluster().tasks, /*count_pipelined=*/true); });
    session.AddJobOrderFn([](const JobInfo& l, const JobInfo& r) {
      const bool l_ready = CountReady(l);
      const bool r_ready = CountReady(r);
      if (l_ready == r_ready) return 0;
      return l_ready ? 1 : -1;
    }, [](const JobInfo& job) { return !CountReady(job); },
    [](const JobInfo& job, OrderKey& key) { key.AddInteger(CountReady(job) ? 1 : 0); });  // the not ready first
  }

  void OnSessionClose(Session& session) override {
    const std::vector<TaskInfo>& tasks = session.cluster().tasks;
    for (const JobInfo& job : session.cluster().jobs) {
      // Jobs an action already explained this session keep that (more specific) message.
      if (session.HasWaitReason(job.id)) continue;
      if (job.phase != PodGroupPhase::kPending && job.phase != PodGroupPhase::kInqueue &&
          job.phase != PodGroupPhase::kRunning) {
        continue;
      }
      if (job.Count(TaskStatus::kPending) == 0) continue;
      if (std::optional<WaitReason> reason = GangInvalidReason(job, tasks)) {
        session.SetWaitReason(job.id, *std::move(reason));
        continue;
      }
      // A job whose gang is complete once evictions finish is waiting, not unschedulable.
      if (GangReady(job, tasks, /*count_pipelined=*/true)) continue;
      const int32_t unready = GangShortfall(job, tasks, /*count_pipelined=*/true);
      WaitReason reason{.kind = WaitKind::kNoFit, .pods = unready, .of = job.min_available,
                        .detail = StrCat(ReadyCount(job, true), " of minAvailable ", job.min_available, " ready")};
      LAHAR_LOG(2, "gang") << job.key() << ": " << WaitReasonText(reason);
      session.SetWaitReason(job.id, std::move(reason));
    }
  }
};

}  // namespace

int32_t GangValidCount(const JobInfo& job) {
  int32_t n = 0;
  for (size_t s = 0; s < kTaskStatusCount; ++s) {
    if (Valid(static_cast<TaskStatus>(s))) n += job.status_count[s];
  }
  return n;
}

std::optional<WaitReason> GangInvalidReason(const JobInfo& job, const std::vector<TaskInfo>& tasks) {
  auto not_enough = [](std::string detail) {
    return WaitReason{.kind = WaitKind::kInvalid, .subject = "NotEnoughPods", .detail = std::move(detail)};
  };
  const int32_t valid = GangValidCount(job);
  if (valid < job.min_available) {
    return not_enough(StrCat("NotEnoughPods: ", valid, "/", job.min_available, " pods, minAvailable ", job.min_available));
  }
  if (job.min_task_member.empty()) return std::nullopt;  // most jobs: no role to count
  // Every task valid: each role counts all its tasks, which the cache found enough.
  if (job.roles_have_min_tasks && job.Count(TaskStatus::kFailed) == 0) return std::nullopt;
  const PerRole per_role = CountPerRole(job, tasks, Valid);
  size_t i = 0;
  for (const auto& [role, min] : job.min_task_member) {
    if (per_role[i] < min) {
      return not_enough(StrCat("NotEnoughPods: ", per_role[i], "/", min, " pods of role ", role, ", minTaskMember ", min));
    }
    ++i;
  }
  return std::nullopt;
}

bool GangReady(const JobInfo& job, const std::vector<TaskInfo>& tasks, bool count_pipelined) {
  return GangShortfall(job, tasks, count_pipelined) == 0;
}

int32_t GangShortfall(const JobInfo& job, const std::vector<TaskInfo>& tasks, bool count_pipelined) {
  const int32_t short_total = std::max(0, job.min_available - ReadyCount(job, count_pipelined));
  if (job.min_task_member.empty()) return short_total;
  const PerRole per_role =
      count_pipelined ? CountPerRole(job, tasks, ReadyOrPipelined) : CountPerRole(job, tasks, Ready);
  int32_t short_roles = 0;
  size_t i = 0;
  for (const auto& [role, min] : job.min_task_member) short_roles += std::max(0, min - per_role[i++]);
  return std::max(short_total, short_roles);
}

absl::StatusOr<std::unique_ptr<Plugin>> NewGangPlugin(const Arguments& arguments) {
  return std::make_unique<GangPlugin>();
}

}  // namespace lahar
