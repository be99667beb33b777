// Builders that make small clusters short to write in tests:
//
//   ClusterBuilder b;
//   b.Node("n1", "cpu=8,memory=32Gi,nvidia.com/gpu=4")
//    .Queue("research", 2)
//    .Job("bert", {.queue = "research", .min = 2, .tasks = {{"worker", 3, "cpu=2,nvidia.com/gpu=1"}}});
//   SessionOutcome out = RunSession(b, kConfig);
//   CHECK(out.binds.at("default/bert-worker-0") == "n1");
//
// Objects go through the real ClusterCache, so tests exercise the same snapshot code as the
// simulator and the daemon.
#ifndef LAHAR_TEST_TESTING_CLUSTER_BUILDER_H_
#define LAHAR_TEST_TESTING_CLUSTER_BUILDER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cache/cluster_cache.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle.h"

namespace lahar::testing {

// "cpu=8,memory=32Gi,nvidia.com/gpu=4" -> Resources; aborts the test on a bad literal.
Resources Res(std::string_view spec);

struct TaskSpec {
  std::string role;
  int replicas = 1;
  std::string requests;        // Res() syntax
  int priority = 0;            // volcano.sh/task-priority
  std::string limits = "";     // default: the requests
  std::map<std::string, std::string, std::less<>> node_selector = {};
  std::vector<Toleration> tolerations = {};
  std::vector<std::string> scheduling_gates = {};  // of every pod of the task
};

struct JobSpec {
  std::string queue = "default";
  int min = 1;
  // minResources as written ("cpu=4"); empty: the requests of the first `min` pods.
  std::string min_resources = "";
  std::vector<TaskSpec> tasks;
  std::string priority_class = "";
  std::map<std::string, int32_t, std::less<>> min_task_member = {};
  PodGroupPhase phase = PodGroupPhase::kInqueue;  // tests start past enqueue unless they say so
  std::string cooldown = "";                      // lahar.sh/elastic-cooldown
  std::string ns = "default";
  bool preemptable = true;                        // false: volcano.sh/preemptable "false"
  std::optional<std::string> throughput = std::nullopt;  // lahar.sh/throughput
  std::optional<NetworkTopology> network_topology = std::nullopt;  // spec.networkTopology
};

class ClusterBuilder {
 public:
  ClusterBuilder& Node(const std::string& name, std::string_view allocatable,
                       StringMap labels = {}, std::vector<Taint> taints = {});
  ClusterBuilder& Cordon(const std::string& name);
  ClusterBuilder& Queue(const std::string& name, int weight, std::string_view capability = "",
                        std::string_view guarantee = "", std::string_view deserved = "");
  // A queue as written, parent and all.
  ClusterBuilder& QueueObject(lahar::Queue queue);
  ClusterBuilder& PriorityClass(const std::string& name, int value);
  // A PodDisruptionBudget without status selecting the pods of job `job` (label job-name), with
  // minAvailable or maxUnavailable ("" unset) written as in YAML: "2", "50%".
  ClusterBuilder& DisruptionBudget(const std::string& name, const std::string& job, std::string_view min_available,
                                   std::string_view max_unavailable = "", std::string ns = "default");
  // Creates PodGroup <ns>/<name> and pods <name>-<role>-<i> (index i counted per role), each
  // labelled job-name=<name>.
  ClusterBuilder& Job(const std::string& name, const JobSpec& spec);
  // Marks pod <ns>/<pod> as running on `node` (the job must have been added).
  ClusterBuilder& Running(const std::string& pod, const std::string& node, std::string ns = "default");
  // Marks pods <job>-<role>-<first..last> (inclusive) running on `node`.
  ClusterBuilder& RunningRange(const std::string& job, const std::string& role, int first, int last,
                               const std::string& node, std::string ns = "default");
  // Sets the scheduling gates of pod <ns>/<pod>, as an update of the pod would ({}: ungated).
  ClusterBuilder& SchedulingGates(const std::string& pod, std::vector<std::string> gates, std::string ns = "default");
  // A pod of another scheduler occupying `requests` on `node`.
  ClusterBuilder& ForeignPod(const std::string& name, const std::string& node, std::string_view requests);
  // Sets PodGroup annotation lahar.sh/throughput of job <ns>/<job>, as the job reporting would.
  ClusterBuilder& Throughput(const std::string& job, const std::string& value, std::string ns = "default");
  ClusterBuilder& LastScaled(const std::string& job, Millis when, std::string ns = "default");

  ClusterCache& cache() { return cache_; }
  ClusterSnapshot Snapshot(Millis now = 0) const { return cache_.Snapshot(now); }

 private:
  ClusterCache cache_;
  int64_t next_uid_ = 1;
};

struct SessionOutcome {
  std::map<std::string, std::string> binds;   // pod key -> node
  std::map<std::string, std::string> evicts;  // pod key -> reason
  std::vector<std::string> bind_order;        // pod keys in the order they were bound
  std::map<std::string, CycleResult::JobUpdate> job_updates;  // job key -> update
  CycleResult raw;
  Millis now = 0;  // the session's time
  // Pods bound per job key.
  int BoundCount(const std::string& job_key) const;
};

// Parses `config_yaml` with the built-in registry (aborts the test on error) and runs one cycle,
// with what earlier cycles left in `memo` when given.
SessionOutcome RunSession(const ClusterBuilder& cluster, std::string_view config_yaml, Millis now = 0,
                          WaitMemo* memo = nullptr);
SchedulerConfig MustParseConfig(std::string_view config_yaml);

// Applies a cycle's bindings and evictions to the builder's cache as if the cluster carried them
// out (bound pods run; evicted pods are gone and recreated pending), and records the elastic
// scale changes (restarting those jobs' cooldowns at the session's time) and the reasons jobs wait
// for, as an owner takes them (ClusterCache::NoteWaitReported), for multi-session tests.
void Apply(ClusterBuilder& cluster, const SessionOutcome& outcome);
// The classes a session that parks jobs (WaitMemo::parks_jobs) offers to park over `cluster`,
// as (representative, members) by the snapshot's job ids; `memo` is kept for the sessions after.
using ParkableClasses = std::vector<std::pair<JobId, std::vector<JobId>>>;
ParkableClasses RunParkingSession(ClusterBuilder& cluster, std::string_view config_yaml, WaitMemo& memo,
                                  SessionOutcome* outcome = nullptr);

// What a session may read of a snapshot, one line per job (counts, reason, tasks' states and
// nodes) and per node (what it holds): two snapshots a session cannot tell apart describe alike.
std::vector<std::string> DescribeSnapshot(const ClusterSnapshot& snap);

}  // namespace lahar::testing

#endif  // LAHAR_TEST_TESTING_CLUSTER_BUILDER_H_
