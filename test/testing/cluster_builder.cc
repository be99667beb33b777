#include "test/testing/cluster_builder.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "api/strings.h"
#include "scheduler/builtins.h"

namespace lahar::testing {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "test setup error: %s\n", what.c_str());
  std::abort();
}

}  // namespace

Resources Res(std::string_view spec) {
  Resources out;
  for (absl::string_view item : absl::StrSplit(ToAbsl(spec), ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2) Fail(StrCat("bad resource literal ", spec));
    ResourceId id = InternResource(FromAbsl(kv[0]));
    auto amount = ParseQuantity(FromAbsl(kv[1]), ResourceUnit(id));
    if (!amount.ok()) Fail(std::string(amount.status().message()));
    out.Set(id, *amount);
  }
  return out;
}

ClusterBuilder& ClusterBuilder::Node(const std::string& name, std::string_view allocatable,
                                     StringMap labels, std::vector<Taint> taints) {
  lahar::Node node;
  node.meta.name = name;
  node.meta.labels = std::move(labels);
  node.meta.labels[kHostnameLabel] = name;
  node.allocatable = Res(allocatable);
  if (node.allocatable.Get(kPods) == 0) node.allocatable.Set(kPods, 110);
  node.capacity = node.allocatable;
  node.taints = std::move(taints);
  cache_.UpsertNode(std::move(node));
  return *this;
}

ClusterBuilder& ClusterBuilder::Cordon(const std::string& name) {
  const lahar::Node* existing = cache_.FindNode(name);
  if (existing == nullptr) Fail("cordon of unknown node " + name);
  lahar::Node node = *existing;
  node.unschedulable = true;
  cache_.UpsertNode(std::move(node));
  return *this;
}

ClusterBuilder& ClusterBuilder::Queue(const std::string& name, int weight, std::string_view capability,
                                      std::string_view guarantee, std::string_view deserved) {
  lahar::Queue queue;
  queue.meta.name = name;
  queue.weight = weight;
  queue.capability = Res(capability);
  queue.guarantee = Res(guarantee);
  queue.deserved = Res(deserved);
  cache_.UpsertQueue(std::move(queue));
  return *this;
}

ClusterBuilder& ClusterBuilder::QueueObject(lahar::Queue queue) {
  cache_.UpsertQueue(std::move(queue));
  return *this;
}

ClusterBuilder& ClusterBuilder::PriorityClass(const std::string& name, int value) {
  lahar::PriorityClass pc;
  pc.meta.name = name;
  pc.value = value;
  cache_.UpsertPriorityClass(std::move(pc));
  return *this;
}

ClusterBuilder& ClusterBuilder::DisruptionBudget(const std::string& name, const std::string& job,
                                                 std::string_view min_available, std::string_view max_unavailable,
                                                 std::string ns) {
  auto count = [&](std::string_view text) -> std::optional<IntOrPercent> {
    if (text.empty()) return std::nullopt;
    IntOrPercent value;
    value.percent = text.back() == '%';
    if (value.percent) text.remove_suffix(1);
    if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &value.value)) Fail(StrCat("bad budget count ", text));
    return value;
  };
  PodDisruptionBudget pdb;
  pdb.meta.name = name;
  pdb.meta.namespace_ = ns;
  pdb.selector = LabelSelector{{{"job-name", job}}, {}};
  pdb.min_available = count(min_available);
  pdb.max_unavailable = count(max_unavailable);
  cache_.UpsertPodDisruptionBudget(std::move(pdb));
  return *this;
}

ClusterBuilder& ClusterBuilder::Job(const std::string& name, const JobSpec& spec) {
  PodGroup pg;
  pg.meta.name = name;
  pg.meta.namespace_ = spec.ns;
  pg.meta.uid = StrCat("uid-", next_uid_++);
  pg.min_member = spec.min;
  pg.min_task_member = spec.min_task_member;
  pg.queue = spec.queue;
  pg.priority_class_name = spec.priority_class;
  pg.network_topology = spec.network_topology;
  pg.phase = spec.phase;
  if (!spec.cooldown.empty()) pg.meta.annotations[kElasticCooldownAnnotation] = spec.cooldown;
  if (!spec.preemptable) pg.meta.annotations[kPreemptableAnnotation] = "false";
  if (spec.throughput) pg.meta.annotations[kThroughputAnnotation] = *spec.throughput;
  // minResources: requests of the first `min` pods in task order, as Volcano's controller does.
  int counted = 0;
  for (const TaskSpec& t : spec.tasks) {
    for (int i = 0; i < t.replicas && counted < spec.min; ++i, ++counted) pg.min_resources += Res(t.requests);
  }
  if (!spec.min_resources.empty()) pg.min_resources = Res(spec.min_resources);
  for (const TaskSpec& t : spec.tasks) {
    for (int i = 0; i < t.replicas; ++i) {
      Pod pod;
      pod.meta.name = StrCat(name, "-", t.role, "-", i);
      pod.meta.namespace_ = spec.ns;
      pod.meta.uid = StrCat("uid-", next_uid_++);
      pod.meta.labels["job-name"] = name;
      pod.meta.annotations[kGroupNameAnnotation] = name;
      pod.meta.annotations[kTaskSpecKey] = t.role;
      if (t.priority != 0) pod.meta.annotations[kTaskPriorityAnnotation] = StrCat(t.priority);
      pod.scheduler_name = "lahar";
      pod.requests = Res(t.requests);
      pod.limits = t.limits.empty() ? pod.requests : Res(t.limits);
      pod.node_selector = StringMap(t.node_selector.begin(), t.node_selector.end());
      pod.tolerations = t.tolerations;
      pod.scheduling_gates = t.scheduling_gates;
      cache_.UpsertPod(std::move(pod));
    }
  }
  cache_.UpsertPodGroup(std::move(pg));
  return *this;
}

ClusterBuilder& ClusterBuilder::Running(const std::string& pod_name, const std::string& node, std::string ns) {
  const Pod* existing = cache_.FindPod(StrCat(ns, "/", pod_name));
  if (existing == nullptr) Fail("running of unknown pod " + pod_name);
  Pod pod = *existing;
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  cache_.UpsertPod(std::move(pod));
  return *this;
}

ClusterBuilder& ClusterBuilder::RunningRange(const std::string& job, const std::string& role, int first,
                                             int last, const std::string& node, std::string ns) {
  for (int i = first; i <= last; ++i) Running(StrCat(job, "-", role, "-", i), node, ns);
  return *this;
}

ClusterBuilder& ClusterBuilder::SchedulingGates(const std::string& pod_name, std::vector<std::string> gates,
                                                std::string ns) {
  const Pod* existing = cache_.FindPod(StrCat(ns, "/", pod_name));
  if (existing == nullptr) Fail("scheduling gates of unknown pod " + pod_name);
  Pod pod = *existing;
  pod.scheduling_gates = std::move(gates);
  cache_.UpsertPod(std::move(pod));
  return *this;
}

ClusterBuilder& ClusterBuilder::ForeignPod(const std::string& name, const std::string& node,
                                           std::string_view requests) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_ = "kube-system";
  pod.meta.uid = StrCat("uid-", next_uid_++);
  pod.scheduler_name = "default-scheduler";
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  pod.requests = Res(requests);
  pod.limits = pod.requests;
  cache_.UpsertPod(std::move(pod));
  return *this;
}

ClusterBuilder& ClusterBuilder::LastScaled(const std::string& job, Millis when, std::string ns) {
  cache_.RecordScale(StrCat(ns, "/", job), when);
  return *this;
}

int SessionOutcome::BoundCount(const std::string& job_key) const {
  int n = 0;
  for (const auto& b : raw.binds) n += b.job == job_key;
  return n;
}

SchedulerConfig MustParseConfig(std::string_view config_yaml) {
  auto config = ParseSchedulerConfig(config_yaml, BuiltinRegistry());
  if (!config.ok()) Fail(std::string(config.status().message()));
  return *config;
}

SessionOutcome RunSession(const ClusterBuilder& cluster, std::string_view config_yaml, Millis now, WaitMemo* memo) {
  SchedulerConfig config = MustParseConfig(config_yaml);
  auto result = RunSchedulingCycle(cluster.Snapshot(now), config, BuiltinRegistry(), memo);
  if (!result.ok()) Fail(std::string(result.status().message()));
  SessionOutcome out;
  for (const auto& b : result->binds) {
    out.binds[b.pod] = b.node;
    out.bind_order.push_back(b.pod);
  }
  for (const auto& e : result->evicts) out.evicts[e.pod] = e.reason;
  for (const auto& u : result->job_updates) out.job_updates[u.job] = u;
  out.raw = std::move(*result);
  out.now = now;
  return out;
}

ClusterBuilder& ClusterBuilder::Throughput(const std::string& job, const std::string& value, std::string ns) {
  const PodGroup* found = cache_.FindPodGroup(StrCat(ns, "/", job));
  if (found == nullptr) Fail("throughput of unknown job " + job);
  PodGroup group = *found;
  group.meta.annotations[kThroughputAnnotation] = value;
  cache_.UpsertPodGroup(std::move(group));
  return *this;
}

ParkableClasses RunParkingSession(ClusterBuilder& cluster, std::string_view config_yaml, WaitMemo& memo,
                                  SessionOutcome* outcome) {
  memo.set_parks_jobs(true);
  SessionOutcome out = RunSession(cluster, config_yaml, 0, &memo);
  ParkableClasses classes;
  for (const CycleResult::Parkable& p : out.raw.parkable) classes.emplace_back(p.representative, p.members);
  if (outcome != nullptr) *outcome = std::move(out);
  return classes;
}

void Apply(ClusterBuilder& cluster, const SessionOutcome& outcome) {
  ClusterCache& cache = cluster.cache();
  for (const auto& b : outcome.raw.binds) {
    Pod pod = *cache.FindPod(b.pod);
    pod.node_name = b.node;
    pod.phase = PodPhase::kRunning;
    cache.UpsertPod(std::move(pod));
  }
  for (const auto& e : outcome.raw.evicts) {
    Pod pod = *cache.FindPod(e.pod);
    pod.node_name.clear();
    pod.phase = PodPhase::kPending;
    pod.meta.uid += "-recreated";
    cache.UpsertPod(std::move(pod));
  }
  for (const auto& u : outcome.raw.job_updates) {
    if (u.waiting) cache.NoteWaitReported(u.job, *u.waiting);
    const PodGroup* group = cache.FindPodGroup(u.job);
    if (group != nullptr && group->phase != u.phase) (void)cache.SetPodGroupPhase(u.job, u.phase);
    if (u.scaled) cache.RecordScale(u.job, outcome.now);
  }
}

// What a session may read of a snapshot: jobs, tasks and what each node holds.
std::vector<std::string> DescribeSnapshot(const ClusterSnapshot& snap) {
  std::vector<std::string> out;
  for (const JobInfo& job : snap.jobs) {
    std::string line = job.key() + " allocated=" + job.allocated.DebugString() + " request=" +
                       job.request.DebugString() + " phase=" + std::to_string(static_cast<int>(job.phase)) +
                       " scaled=" + std::to_string(job.last_scale_time) +
                       " reported=" + (job.reported_wait ? WaitReasonText(*job.reported_wait) : "-") + " counts=";
    for (int32_t count : job.status_count) line += std::to_string(count) + ",";
    line += ":";
    for (TaskId t : job.tasks) {
      const TaskInfo& task = snap.tasks[t];
      line += " " + task.key() + "/" + std::to_string(static_cast<int>(task.status)) + "@" + std::to_string(task.node);
    }
    out.push_back(line);
  }
  for (const NodeInfo& node : snap.nodes) {
    std::string line = node.name() + " used=" + node.used.DebugString() + " releasing=" + node.releasing.DebugString() +
                       " pipelined=" + node.pipelined.DebugString() + " limits=" + node.used_limits.DebugString() +
                       " allocatable=" + node.allocatable.DebugString() + " pods=" + std::to_string(node.pod_count) + "/" +
                       std::to_string(node.releasing_pods) + "/" + std::to_string(node.pipelined_pods) + "/" +
                       std::to_string(node.max_pods) + (node.schedulable ? "" : " unschedulable") + " tasks:";
    for (TaskId t : node.tasks) line += " " + snap.tasks[t].key();
    out.push_back(line);
  }
  for (const QueueInfo& queue : snap.queues) {
    const Resources demand = queue.id < static_cast<QueueId>(snap.queue_demand.size()) ? snap.queue_demand[queue.id] : Resources();
    out.push_back("queue " + queue.name + " demand=" + demand.DebugString());
  }
  return out;
}

}  // namespace lahar::testing
