// The Kubernetes objects Lahar reads, reduced to the fields scheduling needs.
//
// These are plain values decoded once from JSON/YAML (see decode.h); the scheduler never keeps
// JSON trees. The same decoder serves lahar-sim snapshot files and the daemon's watch stream.
#ifndef LAHAR_API_OBJECTS_H_
#define LAHAR_API_OBJECTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/resources.h"

namespace lahar {

// Sorted, so iteration order never depends on hashing.
using StringMap = std::map<std::string, std::string, std::less<>>;

// The API versions of Volcano's objects that Lahar reads and writes.
inline constexpr char kVolcanoApiVersion[] = "scheduling.volcano.sh/v1beta1";  // PodGroup, Queue
inline constexpr char kTopologyApiVersion[] = "topology.volcano.sh/v1alpha1";  // HyperNode (spec 3.3)

inline constexpr char kGroupNameAnnotation[] = "scheduling.k8s.io/group-name";
inline constexpr char kTaskSpecKey[] = "volcano.sh/task-spec";
inline constexpr char kTaskPriorityAnnotation[] = "volcano.sh/task-priority";
inline constexpr char kHostnameLabel[] = "kubernetes.io/hostname";
inline constexpr char kElasticCooldownAnnotation[] = "lahar.sh/elastic-cooldown";
// "false" on a pod or its PodGroup: never a victim of preempt, reclaim or preempt-elastic-workers.
inline constexpr char kPreemptableAnnotation[] = "volcano.sh/preemptable";
inline constexpr char kSimDurationAnnotation[] = "lahar.sh/sim-duration";
// On a PodGroup: how long the job may wait before the sla plugin serves it first (Volcano's).
inline constexpr char kSlaWaitingTimeAnnotation[] = "sla-waiting-time";
// Volcano's job controller writes this one; it wins over the plain one, as in Volcano's sla.
inline constexpr char kVolcanoSlaWaitingTimeAnnotation[] = "volcano.sh/sla-waiting-time";

struct ObjectMeta {
  std::string name;
  std::string namespace_;  // empty for cluster-scoped objects
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;          // metadata.generation; 0 when unset
  int64_t creation_timestamp = 0;  // seconds since the epoch; 0 when unset
  bool deleting = false;           // deletionTimestamp is set
  StringMap labels;
  StringMap annotations;
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

struct Toleration {
  std::string key;       // empty with operator Exists tolerates everything
  std::string operator_ = "Equal";  // Equal or Exists
  std::string value;
  std::string effect;    // empty matches every effect
};

struct NodeSelectorRequirement {
  std::string key;
  std::string operator_;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};

// A term matches when all its requirements match; required affinity matches when any term does.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name is defined
};

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };
// A pod that has finished for good: it holds nothing and never runs again.
inline bool IsTerminal(PodPhase phase) { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }

struct Pod {
  ObjectMeta meta;
  std::string scheduler_name = "default-scheduler";
  std::string node_name;
  PodPhase phase = PodPhase::kPending;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  int64_t termination_grace_period_seconds = 30;
  // Effective requests/limits: max(sum of containers, each init container), plus overhead.
  Resources requests;
  Resources limits;
  StringMap node_selector;
  std::vector<NodeSelectorTerm> required_node_affinity;
  std::vector<Toleration> tolerations;
  // spec.schedulingGates, by name in the order written: while any remains the pod is not
  // scheduled (the apiserver lets them be removed only, never added after creation).
  std::vector<std::string> scheduling_gates;
  // status.startTime in milliseconds since the epoch (the simulator: simulated time); -1 unset.
  int64_t start_time_ms = -1;
};

enum class PodGroupPhase : uint8_t { kPending, kInqueue, kRunning, kUnknown, kCompleted };

// PodGroup spec.networkTopology (spec 3.3): how close together the job's pods must run.
struct NetworkTopology {
  bool hard = true;                  // mode: hard (the default) or soft
  int32_t highest_tier_allowed = 0;  // 0: unset (tier 1 unless highest_tier_name is set)
  std::string highest_tier_name;
  // Why the constraint cannot be honoured as written (both highest tier fields set): the job
  // waits with it. Empty when sound.
  std::string invalid;
};

struct PodGroup {
  ObjectMeta meta;
  int32_t min_member = 1;
  std::map<std::string, int32_t, std::less<>> min_task_member;
  std::string queue = "default";
  std::string priority_class_name;
  Resources min_resources;
  std::optional<NetworkTopology> network_topology;
  PodGroupPhase phase = PodGroupPhase::kPending;
};

struct Queue {
  ObjectMeta meta;
  int32_t weight = 1;
  Resources capability;  // empty: unlimited
  Resources guarantee;
  Resources deserved;    // empty: computed from weights
  bool open = true;      // spec.state / status.state Closed stops admission
  bool reclaimable = true;
  std::string parent;    // "" or "root": top level
  int32_t priority = 0;  // queue order when shares are equal (higher first)
};

struct Node {
  ObjectMeta meta;
  Resources allocatable;
  Resources capacity;
  std::vector<Taint> taints;
  bool unschedulable = false;
  bool ready = true;
};

struct PriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  bool global_default = false;
};

// A label selector (metav1.LabelSelector): every matchLabels pair and every requirement
// (operators In, NotIn, Exists, DoesNotExist) must hold; an empty selector selects everything.
struct LabelSelector {
  StringMap match_labels;
  std::vector<NodeSelectorRequirement> match_expressions;
};

// An IntOrString that is a count or a percentage ("30%").
struct IntOrPercent {
  int32_t value = 0;
  bool percent = false;
};

// policy/v1 PodDisruptionBudget: how many of the pods it selects may be disrupted at once.
struct PodDisruptionBudget {
  ObjectMeta meta;
  // Null: selects no pods (policy/v1); an empty selector selects every pod of the namespace.
  std::optional<LabelSelector> selector;
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
  // status, as the disruption controller last wrote it (has_status: it wrote one).
  bool has_status = false;
  int64_t observed_generation = 0;
  int32_t disruptions_allowed = 0;
};

// topology.volcano.sh/v1alpha1 HyperNode member: a node or a lower-tier HyperNode, chosen by
// exactly one selector kind. Every kind written is kept (selector_kinds counts them), so that a
// member naming two is reported rather than read as one of them.
struct HyperNodeMember {
  enum class Type { kNode, kHyperNode } type = Type::kNode;
  std::optional<std::string> exact_name;
  std::optional<std::string> regex;
  std::optional<LabelSelector> label_match;  // Node members only
  int32_t selector_kinds() const {
    return (exact_name ? 1 : 0) + (regex ? 1 : 0) + (label_match ? 1 : 0);
  }
};

// A network domain (spec 3.3): tier 1 is the lowest (a leaf switch); higher tiers hold lower ones.
struct HyperNode {
  ObjectMeta meta;
  int32_t tier = 0;
  std::string tier_name;
  std::vector<HyperNodeMember> members;
};

std::string_view PodPhaseName(PodPhase phase);
std::string_view PodGroupPhaseName(PodGroupPhase phase);
// The inverse of PodGroupPhaseName; "" reads as Pending, a name it does not know as Unknown.
PodGroupPhase ParsePodGroupPhase(std::string_view name);

}  // namespace lahar

#endif  // LAHAR_API_OBJECTS_H_
