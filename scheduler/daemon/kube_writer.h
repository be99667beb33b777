// The daemon's writes to the apiserver, one function per kind of write: bindings, evictions,
// PodGroup and Queue status, pod conditions and Events. Each builds the JSON body and sends
// one request (status: where the CRD keeps it, see status_patcher.h); callers decide when to
// write (and skip writes that would change nothing).
#ifndef LAHAR_SCHEDULER_DAEMON_KUBE_WRITER_H_
#define LAHAR_SCHEDULER_DAEMON_KUBE_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/objects.h"
#include "api/resources.h"
#include "cache/kube/client.h"
#include "scheduler/daemon/leader_election.h"
#include "scheduler/daemon/status_patcher.h"

namespace lahar {

// The discovery document of kVolcanoApiVersion (api/objects.h), which says which of its
// resources have a status subresource.
inline constexpr char kVolcanoApiPath[] = "/apis/scheduling.volcano.sh/v1beta1";

// "2026-11-23T05:12:00Z" (metav1.Time) and "2026-11-23T05:12:00.123456Z" (metav1.MicroTime).
std::string RfcTime(int64_t unix_micros);
std::string RfcMicroTime(int64_t unix_micros);
int64_t UnixMicrosNow();

absl::StatusOr<HttpResult> BindPod(KubeClient& client, std::string_view namespace_, std::string_view pod,
                                   std::string_view node);
// policy/v1 Eviction: PodDisruptionBudgets are honoured by the apiserver (429 when one blocks).
absl::StatusOr<HttpResult> EvictPod(KubeClient& client, std::string_view namespace_, std::string_view pod);

// What Lahar reports in PodGroup status (Volcano's fields).
struct PodGroupStatus {
  PodGroupPhase phase = PodGroupPhase::kPending;
  // Unschedulable (with the reason the job waits) or Scheduled; empty writes no condition.
  std::string condition_type;
  std::string reason;
  std::string message;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;

  bool operator==(const PodGroupStatus&) const = default;
};
std::string PodGroupStatusPatch(const PodGroupStatus& status, std::string_view transition_time);
absl::StatusOr<HttpResult> PatchPodGroupStatus(StatusPatcher& patcher, std::string_view namespace_,
                                               std::string_view name, const PodGroupStatus& status,
                                               std::string_view transition_time);

// PodScheduled=False with the reason, as kube-scheduler reports an unschedulable pod: reason
// "Unschedulable", or "SchedulingGated" for a pod waiting for its scheduling gates.
absl::StatusOr<HttpResult> PatchPodUnschedulable(KubeClient& client, std::string_view namespace_, std::string_view pod,
                                                 std::string_view reason, std::string_view message,
                                                 std::string_view transition_time);

// Queue status.allocated as Kubernetes quantities; resources of `previous` (what was written
// last) that are no longer allocated are removed.
std::string QueueAllocatedPatch(const Resources& allocated, const Resources& previous);
absl::StatusOr<HttpResult> PatchQueueAllocated(StatusPatcher& patcher, std::string_view queue,
                                               const Resources& allocated, const Resources& previous);

struct EventSpec {
  std::string kind;  // of the object the Event is about: Pod, PodGroup, Queue
  std::string api_version;
  std::string namespace_;  // where the Event is created; "default" for cluster-scoped objects
  std::string object_namespace;
  std::string name;
  std::string uid;
  std::string type = "Warning";  // Normal or Warning
  std::string reason;
  std::string message;
};
absl::StatusOr<HttpResult> CreateEvent(KubeClient& client, const EventSpec& event, std::string_view reporting_instance);

// An Event about the scheduler itself (a configuration it refused): on its own Pod when
// `pod_namespace` and `pod_name` are known (env POD_NAMESPACE / POD_NAME, from the downward
// API), else on its leader-election Lease, which need not exist.
EventSpec SchedulerEvent(std::string_view pod_namespace, std::string_view pod_name, const LeaderElectionConfig& lease,
                         std::string reason, std::string message);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_KUBE_WRITER_H_
