#include "cache/cluster_cache.h"

// ClusterCache::Snapshot: laying the cached objects out as a session's self-contained view,
// job blocks (job_blocks.cc) rebuilt only when their objects change and laid over the spent
// snapshot.

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "api/strings.h"

namespace lahar {
namespace {

// Moves the jobs of `snap` (a spent snapshot) that the next layout keeps, and their tasks, to
// their places in it: job i of the layout is build builds[i] with task_counts[i] tasks, laid in
// order; laid_at[i] is where the last layout put that build, -1 when it did not lay it out (then
// no snapshot holds it). Afterwards snap.job_builds[i] == builds[i] exactly when the
// job there, with its tasks at their new offset, is that build, and moved[i] says whether it was
// moved there (its ids are then the spent snapshot's); jobs and tasks are sized for the layout.
// Both layouts are in key order, so a kept job's source never lies under the place of a kept job
// moved before it: those moving towards the front go first to last, the others last to first.
void MoveKeptJobs(const std::vector<uint64_t>& builds, const std::vector<int32_t>& task_counts,
                  const std::vector<int32_t>& laid_at, ClusterSnapshot& snap, std::vector<uint8_t>& moved_here) {
  // The spent jobs a layout wrote (their builds and first tasks, which it writes together).
  const size_t spent = std::min({snap.jobs.size(), snap.job_builds.size(), snap.job_first_task.size()});
  snap.job_builds.resize(spent);
  snap.job_as_laid_out.resize(spent, 0);  // unknown: as changed
  // Where each spent job's tasks start, from the compact list (a job record is a few hundred
  // bytes: reading each was a cache miss a job).
  std::vector<TaskId> spent_offset = std::move(snap.job_first_task);
  spent_offset.resize(spent);
  struct Kept {
    size_t from_job, to_job, from_task, to_task, tasks;
  };
  std::vector<Kept> moved;
  absl::flat_hash_map<uint64_t, size_t> spent_slot;
  size_t offset = 0;
  for (size_t i = 0; i < builds.size(); offset += static_cast<size_t>(task_counts[i]), ++i) {
    const auto tasks = static_cast<size_t>(task_counts[i]);
    if (i < spent && snap.job_builds[i] == builds[i] && (tasks == 0 || static_cast<size_t>(spent_offset[i]) == offset)) continue;
    if (laid_at[i] < 0) {  // a build no snapshot holds
      if (i < spent && snap.job_builds[i] == builds[i]) snap.job_builds[i] = 0;  // not where it lies: laid anew
      continue;
    }
    // The spent snapshot is most often the last one laid out: the build is where that put it.
    if (const auto at = static_cast<size_t>(laid_at[i]); at < spent && snap.job_builds[at] == builds[i]) {
      moved.push_back({at, i, static_cast<size_t>(spent_offset[at]), offset, tasks});
      continue;
    }
    if (spent_slot.empty()) {
      spent_slot.reserve(spent);
      for (size_t j = 0; j < spent; ++j) spent_slot.emplace(snap.job_builds[j], j);
    }
    auto it = spent_slot.find(builds[i]);
    if (it == spent_slot.end()) continue;
    moved.push_back({it->second, i, static_cast<size_t>(spent_offset[it->second]), offset, tasks});
  }
  const size_t task_count = offset;  // every job's tasks, laid out
  snap.jobs.resize(std::max(snap.jobs.size(), builds.size()));
  snap.job_builds.resize(std::max(spent, builds.size()), 0);
  snap.job_as_laid_out.resize(snap.job_builds.size(), 0);
  snap.tasks.resize(std::max(snap.tasks.size(), task_count));
  auto move_job = [&](const Kept& k) {
    if (k.from_job == k.to_job) return;
    snap.jobs[k.to_job] = std::move(snap.jobs[k.from_job]);
    snap.job_builds[k.to_job] = snap.job_builds[k.from_job];
    snap.job_builds[k.from_job] = 0;
    snap.job_as_laid_out[k.to_job] = snap.job_as_laid_out[k.from_job];
  };
  auto move_tasks = [&](const Kept& k) {
    if (k.from_task == k.to_task) return;
    if (k.from_task > k.to_task) {
      std::move(snap.tasks.begin() + k.from_task, snap.tasks.begin() + k.from_task + k.tasks, snap.tasks.begin() + k.to_task);
    } else {
      std::move_backward(snap.tasks.begin() + k.from_task, snap.tasks.begin() + k.from_task + k.tasks,
                         snap.tasks.begin() + k.to_task + k.tasks);
    }
  };
  for (const Kept& k : moved) {
    if (k.from_job > k.to_job) move_job(k);
  }
  for (auto k = moved.rbegin(); k != moved.rend(); ++k) {
    if (k->from_job < k->to_job) move_job(*k);
  }
  for (const Kept& k : moved) {
    if (k.from_task > k.to_task) move_tasks(k);
  }
  for (auto k = moved.rbegin(); k != moved.rend(); ++k) {
    if (k->from_task < k->to_task) move_tasks(*k);
  }
  snap.jobs.resize(builds.size());
  snap.job_builds.resize(builds.size());
  snap.job_as_laid_out.resize(builds.size());
  snap.tasks.resize(task_count);
  moved_here.assign(builds.size(), 0);
  for (const Kept& k : moved) moved_here[k.to_job] = 1;
  snap.job_first_task = std::move(spent_offset);  // storage reused; the layout writes every entry
  snap.job_first_task.resize(builds.size());
}

}  // namespace

ClusterSnapshot ClusterCache::Snapshot(Millis now, ClusterSnapshot spent, Layout layout) const {
  const auto l = static_cast<size_t>(layout);
  const bool leave_out_parked = layout == Layout::kLeaveOutParked;
  ClusterSnapshot snap;
  snap.now = now;
  snap.jobs = std::move(spent.jobs);
  snap.tasks = std::move(spent.tasks);
  snap.job_builds = std::move(spent.job_builds);
  snap.job_as_laid_out = std::move(spent.job_as_laid_out);
  snap.job_first_task = std::move(spent.job_first_task);
  snap.node_set_version = node_set_version_;
  // The spent snapshot's node ids are this one's: a job it kept as laid out that holds nodes
  // may stay as it is too.
  const bool same_node_ids = spent.node_set_version == node_set_version_;

  // Queues, with the default queue always present, by name.
  if (laid_queues_version_ != queues_version_) {
    std::vector<const Queue*> queues;
    Queue default_queue;
    default_queue.meta.name = options_.default_queue;
    if (queues_.find(options_.default_queue) == queues_.end()) queues.push_back(&default_queue);
    for (const auto& [name, q] : queues_) queues.push_back(&q);
    std::sort(queues.begin(), queues.end(), [](const Queue* a, const Queue* b) { return a->meta.name < b->meta.name; });
    std::vector<std::string> parents;
    laid_queues_.clear();
    for (const Queue* q : queues) {
      QueueInfo info;
      info.id = static_cast<QueueId>(laid_queues_.size());
      info.name = q->meta.name;
      info.weight = q->weight;
      info.capability = q->capability;
      info.guarantee = q->guarantee;
      info.deserved = q->deserved;
      info.open = q->open;
      info.reclaimable = q->reclaimable;
      info.priority = q->priority;
      laid_queues_.push_back(std::move(info));
      parents.push_back(q->parent);
    }
    LinkQueueTree(laid_queues_, parents);
    laid_queue_ids_.clear();
    for (const QueueInfo& q : laid_queues_) laid_queue_ids_[q.name] = q.id;
    laid_queues_version_ = queues_version_;
  }
  snap.queues = laid_queues_;
  const std::map<std::string_view, QueueId, std::less<>>& queue_ids = laid_queue_ids_;
  const QueueId default_queue_id = queue_ids.at(options_.default_queue);

  int32_t default_priority = 0;
  for (const auto& [pod_key, until] : eviction_refused_until_) {
    if (now < until) snap.eviction_refused.insert(pod_key);
  }
  snap.disruption_budgets.reserve(disruption_budgets_.size());
  for (const auto& [key, pdb] : disruption_budgets_) snap.disruption_budgets.push_back(pdb);
  for (const auto& [name, pc] : priority_classes_) {
    snap.priority_classes[name] = pc.value;
    if (pc.global_default) default_priority = pc.value;
  }
  auto priority_of = [&](const std::string& class_name, int32_t fallback) {
    auto it = priority_classes_.find(class_name);
    return it != priority_classes_.end() ? it->second.value : fallback;
  };

  // Bring the job blocks up to date, and what their tasks hold on each node;
  // they are laid out below, in namespace/name order.
  if (all_dirty_) {
    for (const LaidBlock& laid : existing_blocks_) CountHeld(*laid.block, -1);
    queue_sums_.clear();
    blocks_.clear();
    existing_blocks_.clear();
    park_slots_.clear();  // the entries that said so are gone
    parked_count_ = 0;
    parked_classes_ = 0;
    representative_order_.clear();
    class_members_.clear();
    for (const auto& [key, group] : pod_groups_) dirty_jobs_.insert(key);
    for (const auto& [key, pods] : job_pods_) dirty_jobs_.insert(key);
    all_dirty_ = false;
  }
  for (const std::string& key : dirty_jobs_) {
    auto [it, inserted] = blocks_.try_emplace(key);
    JobBlock& block = it->second;
    const bool existed = !inserted && block.exists;
    if (existed) {
      CountHeld(block, -1);
      CountDemand(block, -1);
    }
    RebuildBlock(key, block);
    if (block.exists) {
      CountHeld(block, +1);
      CountDemand(block, +1);
    }
    auto at = std::lower_bound(existing_blocks_.begin(), existing_blocks_.end(), std::string_view(it->first),
                               [](const LaidBlock& entry, std::string_view k) { return entry.key < k; });
    if (existed && (at->parked_class >= 0 || at->first_of >= 0)) UnparkChanged(*at);
    if (block.exists) {
      if (!existed) {
        park_slots_.insert(park_slots_.begin() + (at - existing_blocks_.begin()), {it->first, -1});
        at = existing_blocks_.insert(at, LaidBlock{.key = it->first, .block = &block});
      }
      at->build = block.build;
      at->creation_timestamp = block.job.creation_timestamp;
      at->creation_order = block.job.creation_order;
      at->task_count = static_cast<int32_t>(block.tasks.size());
      at->holds_nodes = std::any_of(block.node_names.begin(), block.node_names.end(),
                                    [](const std::string* name) { return name != nullptr; });
      at->node_ids = nullptr;  // a new build: its ids are resolved when it is laid out
      at->node_ids_version = 0;
      for (LaidBlock::Laid& laid : at->laid) laid.reported_changed = false;
    } else if (existed) {
      park_slots_.erase(park_slots_.begin() + (at - existing_blocks_.begin()));
      existing_blocks_.erase(at);
    }
    if (!block.exists && pod_groups_.count(key) == 0 && job_pods_.count(key) == 0) blocks_.erase(it);
  }
  dirty_jobs_.clear();

  // Nodes in name order (the map's order), laid over the spent snapshot's nodes: their vectors
  // keep their size and storage.
  if (node_ids_version_ != node_set_version_) {
    node_ids_.clear();
    node_ids_.reserve(nodes_.size());
    node_entries_.clear();
    node_entries_.reserve(nodes_.size());
    NodeId id = 0;
    for (const auto& [name, entry] : nodes_) {
      node_ids_[ToAbsl(name)] = id++;
      node_entries_.push_back(&entry);
    }
    node_ids_version_ = node_set_version_;
  }
  // Whether every node's task list in the spent snapshot is this one's (then they are not made
  // again): no node re-laid below (none changed by a session, no pod counted there since), and
  // no job holding nodes moved or re-laid (their tasks keep their ids), none dropped.
  bool node_lists_kept = same_node_ids && spent.nodes.size() == nodes_.size();
  snap.nodes = std::move(spent.nodes);
  snap.nodes.resize(nodes_.size());
  NodeId next_node = 0;
  for (const NodeEntry* laid : node_entries_) {
    const NodeEntry& entry = *laid;
    const std::shared_ptr<const Node>& node = entry.node;
    NodeInfo& info = snap.nodes[next_node];
    info.id = next_node++;
    // What pods hold there, ours and other schedulers': the spent snapshot has it already when
    // no session changed the node since it was laid out and the cache counted no pod there since
    // (then nothing is promised on it either).
    if (info.node == node && info.held_version == entry.held.version) continue;
    node_lists_kept = false;
    // What is made of the node object alone a session never changes: it is laid out again only
    // when the spent snapshot had another object at this place (the spent one holds its objects,
    // so a new one is never at the same address).
    if (info.node != node) {
      info.node = node;
      info.version = entry.version;
      info.allocatable = node->allocatable;
      info.max_pods = static_cast<int32_t>(node->allocatable.Get(kPods) > 0 ? node->allocatable.Get(kPods) : 110);
      info.allocatable.Set(kPods, 0);  // pods are counted, not summed as a resource
      info.schedulable = NodeSchedulable(*node);
    }
    info.pipelined.SetZero();
    info.pipelined_pods = 0;
    info.used = entry.held.used;
    info.used_limits = entry.held.used_limits;
    info.releasing = entry.held.releasing;
    info.pod_count = entry.held.pods;
    info.releasing_pods = entry.held.releasing_pods;
    info.held_version = entry.held.version;
  }
  snap.total_allocatable = total_allocatable_;
  snap.queue_demand.assign(snap.queues.size(), Resources());
  snap.queue_allocated.assign(snap.queues.size(), Resources());
  for (const QueueInfo& queue : snap.queues) {
    auto it = queue_sums_.find(queue.name);
    if (it == queue_sums_.end()) continue;
    snap.queue_demand[queue.id] = it->second.demand;
    snap.queue_allocated[queue.id] = it->second.allocated;
  }
  CheckQueueGuarantees(snap.queues, snap.total_allocatable);
  snap.topology = CurrentTopology();
  auto find_node = [&](const std::string& name) -> NodeId {
    auto it = node_ids_.find(ToAbsl(name));
    return it == node_ids_.end() ? kNoId : it->second;
  };

  // The spent snapshot's jobs that this one keeps are moved to their new places (jobs come and
  // go between sessions, shifting the rest), so that only new builds are copied from blocks;
  // jobs and tasks are sized once (regrowing the vectors moved them all again).
  // The entries laid out, by job id, and the parked jobs named: the entries of those are not
  // read at all.
  last_laid_entries_.clear();
  if (leave_out_parked) {
    snap.parked = std::move(spent.parked);
    snap.parked.clear();
    snap.parked.reserve(static_cast<size_t>(parked_count_));
    snap.parked_counts.assign(static_cast<size_t>(parked_classes_), 0);
    last_laid_entries_.reserve(existing_blocks_.size() - static_cast<size_t>(parked_count_));
    for (size_t e = 0; e < park_slots_.size(); ++e) {
      if (park_slots_[e].parked_class >= 0) {
        snap.parked.push_back(park_slots_[e]);
        ++snap.parked_counts[static_cast<size_t>(park_slots_[e].parked_class)];
      } else {
        last_laid_entries_.push_back(static_cast<int32_t>(e));
      }
    }
  } else {
    last_laid_entries_.resize(existing_blocks_.size());
    for (size_t e = 0; e < existing_blocks_.size(); ++e) last_laid_entries_[e] = static_cast<int32_t>(e);
  }
  const size_t laid_count = last_laid_entries_.size();
  std::vector<uint64_t> builds;
  std::vector<int32_t> task_counts;
  std::vector<int32_t> laid_at;
  builds.reserve(laid_count);
  task_counts.reserve(laid_count);
  laid_at.reserve(laid_count);
  for (const int32_t e : last_laid_entries_) {
    const LaidBlock& entry = existing_blocks_[static_cast<size_t>(e)];
    builds.push_back(entry.build);
    task_counts.push_back(entry.task_count);
    laid_at.push_back(entry.laid[l].build == entry.build ? entry.laid[l].at : -1);
  }
  const size_t spent_jobs = std::min({snap.jobs.size(), snap.job_builds.size(), snap.job_first_task.size()});
  if (laid_count < spent_jobs) node_lists_kept = false;  // jobs dropped, with whatever tasks they had
  std::vector<uint8_t> moved_here;  // bytes: read once a job, a bit's access was a call
  MoveKeptJobs(builds, task_counts, laid_at, snap, moved_here);
  // The jobs that may hold nodes, in job order: the others hold none. Sized once and written by
  // index: appending was a call per job, not inlined.
  struct Holding {
    size_t first, count;
    // Each task's node, as its block resolved it for this node set (what the layout wrote into
    // the tasks): four bytes a task to read instead of a task record. Null: read the tasks.
    const NodeId* nodes;
  };
  std::vector<Holding> holding(laid_count);
  size_t holding_count = 0;
  std::vector<const LaidBlock*> node_gone;  // laid out with a task on a node that is gone
  size_t tasks_laid = 0;
  JobId next_job = 0;
  if (leave_out_parked) {
    snap.parked_representatives.assign(static_cast<size_t>(parked_classes_), kNoId);
    snap.parked_last.clear();
    snap.parked_last.resize(class_members_.size());
    for (size_t c = 0; c < class_members_.size(); ++c) {
      if (class_members_[c].empty()) continue;
      const OrderKey& last = class_members_[c].back();
      snap.parked_last[c] = {last.creation_timestamp, last.creation_order, last.key};
    }
  }
  for (const int32_t e : last_laid_entries_) {
    LaidBlock& entry = existing_blocks_[static_cast<size_t>(e)];
    if (leave_out_parked && entry.representative) {
      snap.parked_representatives[static_cast<size_t>(entry.parked_class)] = next_job;
    }
    const JobId job_id = next_job++;
    entry.laid[l].build = entry.build;
    entry.laid[l].at = job_id;
    const auto offset = static_cast<TaskId>(tasks_laid);
    // The spent snapshot's copy of this very build, tasks and all, is in place (MoveKeptJobs).
    const bool tasks_in_place = snap.job_builds[job_id] == entry.build;
    snap.job_first_task[job_id] = entry.task_count > 0 ? offset : 0;
    JobInfo& job = snap.jobs[job_id];
    if (tasks_in_place && snap.job_as_laid_out[job_id] && !entry.laid[l].reported_changed &&
        (!entry.holds_nodes || same_node_ids)) {
      // No session changed it, the cache changed nothing in place, and the node ids its tasks
      // name are still this snapshot's: it is as this build laid it out, but for its ids when it
      // moved (what it holds is in its nodes' sums already). Its block is not read at all.
      tasks_laid += static_cast<size_t>(entry.task_count);
      const auto first = static_cast<size_t>(offset);
      if (entry.holds_nodes) {
        const bool resolved = entry.node_ids_version == node_set_version_;
        holding[holding_count++] = {first, static_cast<size_t>(entry.task_count), resolved ? entry.node_ids : nullptr};
      }
      if (entry.node_gone) node_gone.push_back(&entry);
      // In place since the spent snapshot laid it out here, it has this place's ids already.
      if (entry.holds_nodes && (moved_here[job_id] || static_cast<size_t>(job_id) >= spent_jobs)) node_lists_kept = false;
      if (!moved_here[job_id]) continue;
      job.id = job_id;
      for (int32_t i = 0; i < entry.task_count; ++i) {
        TaskInfo& task = snap.tasks[first + static_cast<size_t>(i)];
        task.id = offset + i;
        task.job = job_id;
        job.tasks[static_cast<size_t>(i)] = task.id;
      }
      continue;
    }
    entry.laid[l].reported_changed = false;
    snap.job_as_laid_out[job_id] = 1;
    JobBlock& block = *entry.block;
    if (static_cast<size_t>(job_id) < spent_jobs || entry.holds_nodes) node_lists_kept = false;
    if (block.node_set_version != node_set_version_) {
      block.node_ids.resize(block.node_names.size());
      for (size_t i = 0; i < block.node_names.size(); ++i) {
        block.node_ids[i] = block.node_names[i] == nullptr ? kNoId : find_node(*block.node_names[i]);
      }
      block.node_set_version = node_set_version_;
    }
    entry.node_ids = block.node_ids.data();
    entry.node_ids_version = block.node_set_version;
    snap.job_builds[job_id] = block.build;
    if (tasks_in_place) {
      // The spent job was laid out from this very build: a session changes only its counts
      // (Session::SetTaskStatus), phase and scale time, so only those are put back.
      job.status_count = block.job.status_count;
      job.allocated = block.job.allocated;
      job.request = block.job.request;
      job.phase = block.job.phase;
      job.last_scale_time = block.job.last_scale_time;
      if (job.reported_wait != block.job.reported_wait) job.reported_wait = block.job.reported_wait;
    } else {
      job = block.job;  // assigned over the spent job: its strings and vectors keep their storage
    }
    job.id = job_id;
    // Queue ids and priorities depend on every queue and class: resolved once per build.
    if (block.resolved != block.build) {
      block.resolved = block.build;
      int32_t class_priority =
          block.priority_class->empty() ? default_priority : priority_of(*block.priority_class, default_priority);
      if (job.has_pod_group) {
        auto q = queue_ids.find(*block.queue);
        block.queue_id = q == queue_ids.end() ? kNoId : q->second;
        block.priority = class_priority;
      } else {
        block.queue_id = default_queue_id;
        block.priority = block.tasks.front().pod->priority.value_or(class_priority);
      }
    }
    job.queue = block.queue_id;
    job.priority = block.priority;
    job.tasks.resize(block.tasks.size());
    holding[holding_count++] = {tasks_laid, block.tasks.size(), block.node_ids.data()};
    bool any_node_gone = false;
    for (size_t i = 0; i < block.tasks.size(); ++i) {
      TaskInfo& task = snap.tasks[tasks_laid++];
      if (tasks_in_place) {
        task.status = block.tasks[i].status;
        task.node = block.tasks[i].node;
      } else {
        task = block.tasks[i];
      }
      task.id = offset + static_cast<TaskId>(i);
      task.job = job_id;
      if (block.node_names[i] != nullptr) {
        task.node = block.node_ids[i];
        if (task.node == kNoId) {
          task.status = TaskStatus::kFailed;  // its node is gone
          any_node_gone = true;
        }
      }
      job.tasks[i] = task.id;
    }
    entry.node_gone = any_node_gone;
    if (any_node_gone) {
      snap.RecountJob(job);
      node_gone.push_back(&entry);
    }
  }
  // Their queues' sums counted their blocks, whose tasks did not fail: their own instead.
  for (const LaidBlock* entry : node_gone) {
    const JobInfo& job = snap.jobs[static_cast<size_t>(entry->laid[l].at)];
    if (job.queue == kNoId) continue;
    Resources grown;
    snap.queue_demand[job.queue] += JobDemand(job, job.tasks.size(), grown);
    snap.queue_demand[job.queue] -= entry->block->demand;
    snap.queue_allocated[job.queue] += job.allocated;
    snap.queue_allocated[job.queue] -= entry->block->job.allocated;
  }
  holding.resize(holding_count);
  if (node_lists_kept) return snap;
  // Each node's tasks, in id order, in vectors sized once.
  auto for_each_placed = [&](auto&& visit) {  // visit(node, task id)
    for (const Holding& h : holding) {
      if (h.nodes != nullptr) {
        const auto first = static_cast<TaskId>(h.first);
        for (size_t i = 0; i < h.count; ++i) {
          if (h.nodes[i] != kNoId) visit(h.nodes[i], first + static_cast<TaskId>(i));
        }
        continue;
      }
      for (size_t i = h.first; i < h.first + h.count; ++i) {
        if (snap.tasks[i].node != kNoId) visit(snap.tasks[i].node, snap.tasks[i].id);
      }
    }
  };
  std::vector<int32_t> on_node(snap.nodes.size(), 0);
  for_each_placed([&](NodeId node, TaskId) { ++on_node[node]; });
  // Filled through a compact list of where each node's next task goes, not through the nodes
  // themselves (a node's record is a few hundred bytes: its list's end was a cache miss a task).
  // Every entry is written: a list of the same length as the spent snapshot's is not resized.
  std::vector<TaskId*> next_of(snap.nodes.size(), nullptr);
  for (NodeInfo& node : snap.nodes) {
    if (node.tasks.size() != static_cast<size_t>(on_node[node.id])) node.tasks.resize(static_cast<size_t>(on_node[node.id]));
    next_of[node.id] = node.tasks.data();
  }
  for_each_placed([&](NodeId node, TaskId task) { *next_of[node]++ = task; });
  return snap;
}

ClusterCache::LaidBlock* ClusterCache::FindLaidBlock(std::string_view key) const {
  auto at = std::lower_bound(existing_blocks_.begin(), existing_blocks_.end(), key,
                             [](const LaidBlock& entry, std::string_view k) { return entry.key < k; });
  return at != existing_blocks_.end() && at->key == key ? &*at : nullptr;
}

}  // namespace lahar
