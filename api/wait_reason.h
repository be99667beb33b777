// Why a job waits (spec 7): one kind and the figures behind it, made by the code that decided
// not to place the job and kept as data. WaitReasonText turns it into the words that every
// output uses (PodGroup condition and Event, events.jsonl, summary.json, /debug/explain, /ui,
// kubectl lahar why); nothing else formats a reason.
#ifndef LAHAR_API_WAIT_REASON_H_
#define LAHAR_API_WAIT_REASON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/resources.h"

namespace lahar {

enum class WaitKind : uint8_t {
  kQueueLimit,         // the job's queue (or an ancestor) would pass its capability or deserved share
  kAdmission,          // enqueue: the cluster cannot take the job's minimum yet
  kNoFit,              // pods of the min fit no node
  kTopology,           // the min fits no single network domain it is allowed (issue 16)
  kGated,              // pods carry scheduling gates
  kWaitingForVictims,  // evictions for it are under way
  kNotLeafQueue,       // the job names a queue with child queues
  kQueueClosed,        // the queue takes no new jobs
  kInvalid,            // a field of the job or its queue is at fault
};
inline constexpr int kWaitKindCount = 9;

// "queue-limit", "no-fit", ... as spec 7 names them; ParseWaitKind is its inverse.
std::string_view WaitKindName(WaitKind kind);
std::optional<WaitKind> ParseWaitKind(std::string_view name);

// A limit a request would pass: `limit` of `resource` against `used`, asked `need` more.
struct ResourceShortage {
  ResourceId resource = 0;
  int64_t limit = 0;  // canonical units (millicores, bytes, counts)
  int64_t used = 0;
  int64_t need = 0;  // 0 when the job asks nothing more of it (a queue at its deserved share)
  bool operator==(const ResourceShortage&) const = default;
};

struct WaitReason {
  WaitKind kind = WaitKind::kNoFit;
  // queue-limit, not-leaf-queue, queue-closed: the queue. admission: the check that refused
  // ("overcommit", "cluster"). invalid: Volcano's condition reason for the fault
  // ("NotEnoughPods", "QueueNotFound"; empty: "Invalid").
  std::string subject{};
  // queue-limit: "capability" or "deserved". admission: what is counted ("minResources"), or
  // what the cluster has ("free", "free or evictable").
  std::string limit{};
  // queue-limit, admission; no-fit: the resource most nodes had too little of and one pod's
  // need of it (limit and used 0).
  std::optional<ResourceShortage> shortage{};
  double factor = 0;                         // admission (overcommit): allocatable x factor
  int32_t pods = 0;  // no-fit: pods of the min that fit no node; gated, waiting-for-victims: pods
  int32_t of = 0;    // no-fit, waiting-for-victims: the pods the job needs (its min)
  // no-fit: node count per refusal, most common first; waiting-for-victims: pods terminating
  // per victim job.
  std::vector<std::pair<std::string, int32_t>> counts{};
  std::vector<std::string> names{};// gated: the gates, sorted
  std::string detail{};            // invalid: what is wrong; no-fit without counts: why

  bool operator==(const WaitReason&) const = default;
};

// The reason in words, e.g. "queue team-a: capability nvidia.com/gpu 16, allocated 12, needs 8".
std::string WaitReasonText(const WaitReason& reason);

// The PodGroup condition reason Volcano's users know for it ("NotEnoughResources",
// "SchedulingGated", "QueueClosed", ...).
std::string_view ConditionReason(const WaitReason& reason);

}  // namespace lahar

#endif  // LAHAR_API_WAIT_REASON_H_
