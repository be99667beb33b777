#include "plugins/drf/drf.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "scheduler/framework/per_job.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

// Shares closer than this are equal (Volcano's shareDelta): float noise must not decide.
constexpr double kShareDelta = 1e-6;

class DrfPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "drf"; }

  void OnSessionOpen(Session& session) override {
    session_ = &session;
    total_ = session.cluster().total_allocatable;
    share_.assign(session.cluster().jobs.size(), 0.0);
    for (JobId id : session.LiveJobs()) share_[id] = kStale;  // the others hold nothing: a share of 0
    // Until a task moves, what a job holds is its own `allocated` (most sessions move none).
    counting_ = false;
    session.BeforeNextTaskChange([this] { StartCounting(); });

    session.AddJobOrderFn([this](const JobInfo& l, const JobInfo& r) {
      const double ls = ShareOf(l.id);
      const double rs = ShareOf(r.id);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    }, [](const JobInfo& job) { return job.allocated.IsZero(); },  // a share of 0
    [this](const JobInfo& job, OrderKey& key) { key.AddNumber(ShareOf(job.id)); });

    session.AddPreemptableFn([this](const TaskInfo& preemptor, const std::vector<TaskId>& candidates) {
      const double preemptor_share = DominantShare(AllocatedOf(preemptor.job) + preemptor.request, total_);
      std::map<JobId, Resources> remaining;  // what each victim job keeps after the victims so far
      std::vector<TaskId> victims;
      for (TaskId id : candidates) {
        const TaskInfo& candidate = session_->task(id);
        auto it = remaining.find(candidate.job);
        if (it == remaining.end()) it = remaining.emplace(candidate.job, AllocatedOf(candidate.job)).first;
        Resources after = it->second - candidate.request;
        const double victim_share = DominantShare(after, total_);
        if (preemptor_share < victim_share || std::abs(preemptor_share - victim_share) <= kShareDelta) {
          it->second = std::move(after);
          victims.push_back(id);
        }
      }
      return victims;
    });

    session.AddEventHandler({
        [this](const TaskInfo& task) { Update(task.job, task.request, +1); },
        [this](const TaskInfo& task) { Update(task.job, task.request, -1); },
    });
  }

 private:
  // From the first task that moves on, each job's placed and pipelined requests are counted
  // here, starting from what it held at the opening: the live jobs' sums only (the others hold
  // nothing), looked up by job, so that a session costs its live jobs, not its backlog.
  void StartCounting() {
    allocated_.Reset(session_->cluster().jobs.size());
    allocated_.Reserve(session_->LiveJobs().size());
    for (JobId id : session_->LiveJobs()) allocated_.TryEmplace(id, session_->job(id).allocated);
    counting_ = true;
  }
  const Resources& AllocatedOf(JobId job) const {
    if (!counting_) return session_->job(job).allocated;
    const Resources* allocated = allocated_.Find(job);
    return allocated != nullptr ? *allocated : nothing_;
  }

  void Update(JobId job, const Resources& request, int sign) {
    Resources& allocated = allocated_[job];  // made empty for a job that held nothing at the opening
    if (sign > 0) {
      allocated += request;
    } else {
      allocated -= request;
    }
    share_[job] = kStale;  // made again when jobs are next compared: tasks move far more often
  }

  // Compared in every sort of jobs: one load and a test when it is current.
  double ShareOf(JobId job) {
    double& share = share_[job];
    if (share < 0) share = DominantShare(AllocatedOf(job), total_);
    return share;
  }

  static constexpr double kStale = -1;  // a share is never negative

  const Session* session_ = nullptr;
  Resources total_;
  bool counting_ = false;             // a task moved: allocated_ holds the counts
  // Per job holding anything: placed and pipelined requests (never held while another is made).
  PerJob<Resources, std::vector<Resources>> allocated_;
  const Resources nothing_{};
  std::vector<double> share_;         // per job: DominantShare of allocated_, or kStale
};

}  // namespace

double DominantShare(const Resources& allocated, const Resources& total) {
  double share = 0;
  const size_t n = std::max(allocated.size(), total.size());
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<ResourceId>(i);
    if (id == kPods) continue;
    const int64_t a = allocated.Get(id);
    const int64_t t = total.Get(id);
    double s;
    if (t <= 0) {
      s = a > 0 ? 1.0 : 0.0;
    } else {
      s = static_cast<double>(a) / static_cast<double>(t);
    }
    share = std::max(share, s);
  }
  return share;
}

absl::StatusOr<std::unique_ptr<Plugin>> NewDrfPlugin(const Arguments& arguments) {
  return std::make_unique<DrfPlugin>();
}

}  // namespace lahar
