// What the daemon writes about jobs and queues after every cycle: PodGroup status (phase, one
// condition, pod counts), PodScheduled conditions on waiting pods, Unschedulable Events, Queue
// status.allocated and the queue and fulfillment gauges. Each write happens only when it would
// change what the apiserver shows (or last accepted), on the status work queue, after pending
// bindings; pod counts at most every 5 s per PodGroup. Status goes to the status subresource
// where the CRD has one and to the object itself where it does not (StatusPatcher).
#ifndef LAHAR_SCHEDULER_DAEMON_STATUS_WRITER_H_
#define LAHAR_SCHEDULER_DAEMON_STATUS_WRITER_H_

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cache/kube/client.h"
#include "cache/kube/reflector.h"
#include "rapidjson/document.h"
#include "scheduler/daemon/kube_writer.h"
#include "scheduler/daemon/metrics.h"
#include "scheduler/daemon/status_patcher.h"
#include "scheduler/daemon/work_queue.h"
#include "scheduler/framework/cycle.h"

namespace lahar {

// What a cycle needs to know about a job after its snapshot has been handed to the session.
struct JobDigest {
  std::string key;  // namespace/name
  double fulfillment = 1;  // spec 2, from the one definition (api/cluster_info.h)
  std::string namespace_;
  std::string name;
  std::string uid;
  bool has_pod_group = true;
  PodGroupPhase phase = PodGroupPhase::kPending;
  int32_t min = 1;
  int32_t max = 1;
  int32_t placed = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::vector<std::string> pending_pods;  // names
  std::set<std::string, std::less<>> gated_pods;  // of those, the ones with scheduling gates
};

class StatusWriter {
 public:
  struct Metrics {
    CounterFamily& writes;    // lahar_status_writes_total{kind,result}
    CounterFamily& attempts;  // lahar_schedule_attempts_total{result}: unschedulable pods
    GaugeFamily& fulfillment;
    GaugeFamily& queue_allocated;
    GaugeFamily& queue_deserved;
  };

  // `report_delay`: how long a reason to wait must hold before Events and pod conditions say
  // it, so that a gang whose pods are still being created makes no noise.
  StatusWriter(KubeClient& client, WorkQueue& status_queue, const WorkQueue& bind_queue,
               std::chrono::milliseconds report_delay, std::function<void(EventSpec)> post_event, Metrics metrics);

  // From the PodGroup reflector's threads: the status as the apiserver shows it now.
  void ObservePodGroup(WatchEventType type, const rapidjson::Value& object);
  // From the loop, after a cycle. `jobs` are every job of the cycle's snapshot.
  void WriteJobStatus(const CycleResult& result, const std::vector<JobDigest>& jobs);
  // `existing`: the queues that have an object (the implicit default queue may not).
  void WriteQueueStatus(const CycleResult& result, const std::set<std::string, std::less<>>& existing);

 private:
  using Clock = std::chrono::steady_clock;

  struct JobCondition {
    std::string type;
    std::string reason;
    std::string message;
    std::string previous_message;  // the waiting message of the previous session
    Clock::time_point since;       // when it first said previous_message
    std::string reported_message;  // the last one Events and pod conditions were written for
  };

  // Status writes give way to bindings (bounded, so status is never starved for long).
  void WaitForBinds();

  KubeClient& client_;
  StatusPatcher status_patcher_;  // PodGroup and Queue status
  WorkQueue& status_queue_;
  const WorkQueue& bind_queue_;
  const std::chrono::milliseconds report_delay_;
  const std::function<void(EventSpec)> post_event_;
  Metrics metrics_;

  // Loop thread only.
  std::map<std::string, JobCondition, std::less<>> conditions_;
  std::map<std::string, Resources, std::less<>> queue_allocated_;

  std::mutex mu_;  // guards what reflector threads and status writers share below
  std::map<std::string, PodGroupStatus, std::less<>> observed_status_;
  std::map<std::string, PodGroupStatus, std::less<>> written_status_;
  std::map<std::string, Clock::time_point, std::less<>> count_written_at_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_STATUS_WRITER_H_
