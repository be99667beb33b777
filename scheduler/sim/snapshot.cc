#include "scheduler/sim/snapshot.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/decode.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "cache/cluster_cache.h"

namespace lahar {

absl::StatusOr<SimInput> LoadSnapshot(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<KubeObject> objects, DecodeObjectStream(text));
  SimInput input;
  input.name = "snapshot";
  input.from_snapshot = true;
  std::map<std::string, SimJob, std::less<>> jobs;  // by ns/name
  std::vector<Pod> pods;
  std::set<std::string, std::less<>> seen;
  auto unique = [&](std::string_view kind, const ObjectMeta& meta) -> absl::Status {
    std::string key = StrCat(kind, " ", meta.namespace_.empty() ? "" : meta.namespace_ + "/", meta.name);
    if (!seen.insert(key).second) return absl::InvalidArgumentError(StrCat("duplicate ", key));
    return absl::OkStatus();
  };
  for (KubeObject& object : objects) {
    if (auto* node = std::get_if<Node>(&object)) {
      RETURN_IF_ERROR(unique("Node", node->meta));
      input.nodes.push_back(std::move(*node));
    } else if (auto* pod = std::get_if<Pod>(&object)) {
      RETURN_IF_ERROR(unique("Pod", pod->meta));
      pods.push_back(std::move(*pod));
    } else if (auto* pg = std::get_if<PodGroup>(&object)) {
      RETURN_IF_ERROR(unique("PodGroup", pg->meta));
      SimJob& job = jobs[StrCat(pg->meta.namespace_, "/", pg->meta.name)];
      job.group = std::move(*pg);
    } else if (auto* queue = std::get_if<Queue>(&object)) {
      RETURN_IF_ERROR(unique("Queue", queue->meta));
      input.queues.push_back(std::move(*queue));
    } else if (auto* pc = std::get_if<PriorityClass>(&object)) {
      RETURN_IF_ERROR(unique("PriorityClass", pc->meta));
      input.priority_classes.push_back(std::move(*pc));
    } else if (auto* pdb = std::get_if<PodDisruptionBudget>(&object)) {
      RETURN_IF_ERROR(unique("PodDisruptionBudget", pdb->meta));
      input.disruption_budgets.push_back(std::move(*pdb));
    } else if (auto* hypernode = std::get_if<HyperNode>(&object)) {
      RETURN_IF_ERROR(unique("HyperNode", hypernode->meta));
      input.hypernodes.push_back(std::move(*hypernode));
    }
  }
  if (input.nodes.empty()) return absl::InvalidArgumentError("snapshot has no nodes");
  for (Pod& pod : pods) {
    if (IsTerminal(pod.phase)) continue;
    bool ours = pod.scheduler_name == "lahar" || pod.scheduler_name == "volcano";
    if (!ours) {
      if (!pod.node_name.empty()) input.foreign_pods.push_back(std::move(pod));
      continue;
    }
    auto group = pod.meta.annotations.find(kGroupNameAnnotation);
    std::string key;
    if (group != pod.meta.annotations.end() && !group->second.empty()) {
      key = StrCat(pod.meta.namespace_, "/", group->second);
      if (jobs.find(key) == jobs.end()) {
        return absl::InvalidArgumentError(StrCat("Pod ", pod.meta.namespace_, "/", pod.meta.name,
                                                 ": its PodGroup ", key, " is not in the snapshot"));
      }
    } else {
      // A lone pod is a job of its own; give it a PodGroup so the simulator can track it.
      key = StrCat(pod.meta.namespace_, "/", pod.meta.name);
      SimJob& job = jobs[key];
      job.group.meta.name = pod.meta.name;
      job.group.meta.namespace_ = pod.meta.namespace_;
      job.group.min_member = 1;
      job.group.min_resources = pod.requests;
      job.group.priority_class_name = pod.priority_class_name;
      pod.meta.annotations[kGroupNameAnnotation] = pod.meta.name;
    }
    SimJob& job = jobs[key];
    if (!pod.node_name.empty()) {
      job.initially_bound.push_back(pod.meta.name);
      pod.phase = PodPhase::kRunning;
    }
    job.pod_tasks.push_back(PodRole(pod));
    job.pods.push_back(std::move(pod));
  }
  std::vector<SimJob> made;
  for (auto& [key, job] : jobs) {
    if (job.pods.empty()) continue;  // a PodGroup without pods has nothing to simulate
    input.jobs.push_back(EntryOf(key, job));
    made.push_back(std::move(job));
  }
  input.job_source = MadeJobsSource(std::move(made));
  return input;
}

}  // namespace lahar
