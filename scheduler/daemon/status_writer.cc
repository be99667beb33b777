#include "scheduler/daemon/status_writer.h"

#include <algorithm>
#include <thread>

#include "api/log.h"
#include "api/strings.h"
#include "cache/kube/json_fields.h"

namespace lahar {
namespace {

constexpr auto kCountsWritePeriod = std::chrono::seconds(5);

// The status fields Lahar writes, as the apiserver last showed them.
PodGroupStatus ObservedStatus(const rapidjson::Value& object) {
  PodGroupStatus status;
  const rapidjson::Value& s = ObjectField(object, "status");
  // No phase at all (a PodGroup nobody has written status for yet) differs from every phase we
  // write, so the first status is always written.
  const std::string phase = StringField(s, "phase");
  status.phase = phase.empty() ? PodGroupPhase::kUnknown : ParsePodGroupPhase(phase);
  auto conditions = s.FindMember("conditions");
  if (conditions != s.MemberEnd() && conditions->value.IsArray() && conditions->value.Size() == 1 &&
      conditions->value[0].IsObject()) {
    const rapidjson::Value& c = conditions->value[0];
    status.condition_type = StringField(c, "type");
    status.reason = StringField(c, "reason");
    status.message = StringField(c, "message");
  }
  status.running = static_cast<int32_t>(IntField(s, "running"));
  status.succeeded = static_cast<int32_t>(IntField(s, "succeeded"));
  status.failed = static_cast<int32_t>(IntField(s, "failed"));
  return status;
}

bool SamePhaseAndCondition(const PodGroupStatus& a, const PodGroupStatus& b) {
  return a.phase == b.phase && a.condition_type == b.condition_type && a.reason == b.reason && a.message == b.message;
}

}  // namespace

StatusWriter::StatusWriter(KubeClient& client, WorkQueue& status_queue, const WorkQueue& bind_queue,
                           std::chrono::milliseconds report_delay, std::function<void(EventSpec)> post_event,
                           Metrics metrics)
    : client_(client),
      status_patcher_(client, kVolcanoApiPath),
      status_queue_(status_queue),
      bind_queue_(bind_queue),
      report_delay_(report_delay),
      post_event_(std::move(post_event)),
      metrics_(metrics) {}

void StatusWriter::ObservePodGroup(WatchEventType type, const rapidjson::Value& object) {
  const std::string key = StrCat(MetadataField(object, "namespace"), "/", MetadataField(object, "name"));
  std::lock_guard<std::mutex> lock(mu_);
  if (type == WatchEventType::kDeleted) {
    observed_status_.erase(key);
    written_status_.erase(key);
    count_written_at_.erase(key);
  } else {
    observed_status_[key] = ObservedStatus(object);
  }
}

void StatusWriter::WriteJobStatus(const CycleResult& result, const std::vector<JobDigest>& jobs) {
  std::map<std::string, const CycleResult::JobUpdate*, std::less<>> updates;
  for (const auto& u : result.job_updates) updates[u.job] = &u;
  const std::string now = RfcTime(UnixMicrosNow());
  std::set<std::string, std::less<>> live;
  metrics_.fulfillment.Clear();
  size_t unschedulable = 0;
  for (const JobDigest& job : jobs) {
    const std::string& key = job.key;
    live.insert(key);
    auto u = updates.find(key);
    JobCondition& condition = conditions_[key];
    auto set_condition = [&condition](std::string type, std::string reason, std::string message) {
      condition.type = std::move(type);
      condition.reason = std::move(reason);
      condition.message = std::move(message);
    };
    PodGroupPhase phase = job.phase;
    const bool scheduled = job.placed >= job.min && job.placed > 0;
    if (u != updates.end()) phase = u->second->phase;
    if (u != updates.end() && u->second->waiting) {
      set_condition("Unschedulable", std::string(u->second->reason()), u->second->message());
    } else if (scheduled || (u != updates.end() && phase == PodGroupPhase::kRunning)) {
      set_condition("Scheduled", "Scheduled", StrCat("the gang's minimum of ", job.min, " pods is placed"));
    }
    if (job.has_pod_group && job.max > job.min) {
      double score = std::clamp(job.fulfillment, 0.0, 1.0);
      metrics_.fulfillment.Set({job.namespace_, job.name}, score);
    }
    const bool waiting = condition.type == "Unschedulable";
    if (waiting) unschedulable += job.pending_pods.size();
    if (!waiting || condition.message != condition.previous_message) condition.since = Clock::now();
    condition.previous_message = waiting ? condition.message : "";
    const bool stable = waiting && Clock::now() - condition.since >= report_delay_;

    if (job.has_pod_group) {
      PodGroupStatus status{phase, condition.type, condition.reason, condition.message,
                            job.running, job.succeeded, job.failed};
      bool write;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto observed = observed_status_.find(key);
        auto written = written_status_.find(key);
        write = (observed == observed_status_.end() || !(observed->second == status)) &&
                (written == written_status_.end() || !(written->second == status));
        // Pod counts move with every pod that starts; they are written at most every
        // kCountsWritePeriod per PodGroup, phase and condition changes at once. A deferred
        // write happens in a later session, which compares again.
        if (write && written != written_status_.end() && SamePhaseAndCondition(written->second, status) &&
            Clock::now() - count_written_at_[key] < kCountsWritePeriod) {
          write = false;
        }
        if (write) {
          written_status_[key] = status;
          count_written_at_[key] = Clock::now();
        }
      }
      if (write) {
        status_queue_.Push([this, ns = job.namespace_, name = job.name, status, now] {
          WaitForBinds();
          absl::StatusOr<HttpResult> r = PatchPodGroupStatus(status_patcher_, ns, name, status, now);
          bool ok = r.ok() && r->ok();
          metrics_.writes.Add({"podgroup", ok ? "success" : "error"});
          if (!ok) {
            LAHAR_WARN("status") << "PodGroup " << ns << "/" << name << ": "
                                 << (r.ok() ? r->Describe() : std::string(r.status().message()));
            std::lock_guard<std::mutex> lock(mu_);
            written_status_.erase(StrCat(ns, "/", name));
          }
        });
      }
    }
    if (!stable || condition.reported_message == condition.message) continue;
    condition.reported_message = condition.message;
    std::string message = condition.message;
    if (job.has_pod_group) {
      post_event_(EventSpec{"PodGroup", kVolcanoApiVersion, job.namespace_, job.namespace_, job.name, job.uid,
                            "Warning", "Unschedulable", message});
    }
    for (const std::string& pod : job.pending_pods) {
      if (!job.has_pod_group) {
        post_event_(EventSpec{"Pod", "v1", job.namespace_, job.namespace_, pod, "", "Warning", "FailedScheduling",
                              message});
      }
      // kube-scheduler's (and the apiserver's, at creation) reason for a pod kept back by its gates.
      const char* pod_reason = job.gated_pods.count(pod) != 0 ? "SchedulingGated" : "Unschedulable";
      status_queue_.Push([this, ns = job.namespace_, pod, pod_reason, message, now] {
        WaitForBinds();
        absl::StatusOr<HttpResult> r = PatchPodUnschedulable(client_, ns, pod, pod_reason, message, now);
        bool ok = r.ok() && (r->ok() || r->status == 404);
        metrics_.writes.Add({"pod-condition", ok ? "success" : "error"});
      });
    }
  }
  metrics_.attempts.Add({"unschedulable"}, static_cast<double>(unschedulable));
  // Forget jobs that are gone.
  for (auto it = conditions_.begin(); it != conditions_.end();) {
    it = live.count(it->first) ? std::next(it) : conditions_.erase(it);
  }
}

void StatusWriter::WriteQueueStatus(const CycleResult& result, const std::set<std::string, std::less<>>& existing) {
  metrics_.queue_allocated.Clear();
  metrics_.queue_deserved.Clear();
  auto gauge_value = [](ResourceId id, int64_t amount) {
    return ResourceUnit(id) == QuantityUnit::kMilli ? static_cast<double>(amount) / 1000 : static_cast<double>(amount);
  };
  for (const auto& q : result.queues) {
    for (const auto& [id, amount] : q.allocated.NonZero()) {
      metrics_.queue_allocated.Set({q.queue, ResourceName(id)}, gauge_value(id, amount));
    }
    if (q.deserved) {
      for (const auto& [id, amount] : q.deserved->NonZero()) {
        metrics_.queue_deserved.Set({q.queue, ResourceName(id)}, gauge_value(id, amount));
      }
    }
    if (!existing.count(q.queue)) continue;  // the implicit default queue has no object
    Resources previous;
    auto it = queue_allocated_.find(q.queue);
    if (it != queue_allocated_.end()) {
      if (it->second == q.allocated) continue;
      previous = it->second;
    }
    queue_allocated_[q.queue] = q.allocated;
    status_queue_.Push([this, name = q.queue, allocated = q.allocated, previous] {
      WaitForBinds();
      absl::StatusOr<HttpResult> r = PatchQueueAllocated(status_patcher_, name, allocated, previous);
      bool ok = r.ok() && r->ok();
      metrics_.writes.Add({"queue", ok ? "success" : "error"});
      if (!ok) {
        LAHAR_WARN("status") << "Queue " << name << ": " << (r.ok() ? r->Describe() : std::string(r.status().message()));
      }
    });
  }
}

// Status writes give way to bindings: both go to the same apiserver, and a pod waiting for
// its node matters more than a status field. Bounded, so status is never starved for long.
void StatusWriter::WaitForBinds() {
  auto until = Clock::now() + std::chrono::seconds(5);
  while (bind_queue_.Pending() > 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace lahar
