#include "cache/cluster_cache.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "api/duration.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::DescribeSnapshot;

// A pod of Lahar's in namespace default without a PodGroup: a job of its own.
Pod LonePod(const std::string& name) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_ = "default";
  pod.meta.uid = "uid-" + name;
  pod.scheduler_name = "lahar";
  return pod;
}

void AddNode(ClusterCache& cache, const std::string& name, int64_t cpu_millis) {
  Node node;
  node.meta.name = name;
  node.allocatable.Set(kCpu, cpu_millis);
  cache.UpsertNode(node);
}

// A lone pod asking for one cpu: running on `node`, or pending when it is empty.
void AddLonePod(ClusterCache& cache, const std::string& name, const std::string& node) {
  Pod pod = LonePod(name);
  pod.requests.Set(kCpu, 1000);
  pod.node_name = node;
  pod.phase = node.empty() ? PodPhase::kPending : PodPhase::kRunning;
  cache.UpsertPod(pod);
}

TEST_CASE("pod index follows the spec's label order, then the name suffix") {
  Pod pod;
  pod.meta.name = "job-worker-7";
  CHECK(PodIndex(pod) == 7);
  pod.meta.labels["volcano.sh/task-index"] = "3";
  CHECK(PodIndex(pod) == 3);
  pod.meta.labels["batch.kubernetes.io/job-completion-index"] = "5";
  CHECK(PodIndex(pod) == 5);
}

TEST_CASE("a task carries its pod's scheduling gates, and an update that removes them is seen") {
  ClusterCache cache;
  Pod pod = LonePod("solo");
  pod.scheduling_gates = {"example.com/quota"};
  Pod plain = LonePod("plain");
  cache.UpsertPod(pod);
  cache.UpsertPod(plain);
  ClusterSnapshot before = cache.Snapshot(0);
  REQUIRE(before.tasks.size() == 2);
  const TaskInfo& gated = before.tasks[before.jobs[before.FindJob("default/solo")].tasks.front()];
  const TaskInfo& ungated = before.tasks[before.jobs[before.FindJob("default/plain")].tasks.front()];
  CHECK(gated.gated);
  CHECK(gated.pod->scheduling_gates == std::vector<std::string>{"example.com/quota"});
  CHECK_FALSE(ungated.gated);
  // Gates are a scheduling constraint: the two pods differ in nothing else, yet not in class.
  CHECK(gated.constraint_class != ungated.constraint_class);

  pod.scheduling_gates.clear();  // the pod as a PATCH removing its gates leaves it
  cache.UpsertPod(pod);
  ClusterSnapshot after = cache.Snapshot(1000);
  const TaskInfo& now = after.tasks[after.jobs[after.FindJob("default/solo")].tasks.front()];
  CHECK_FALSE(now.gated);
  CHECK(now.constraint_class == ungated.constraint_class);
}

TEST_CASE("pods alike in constraints, requests and limits share a shape, and an update that changes one is seen") {
  ClusterCache cache;
  auto pod_of = [](const std::string& name, int64_t cpu, int64_t cpu_limit) {
    Pod pod = LonePod(name);
    pod.requests.Set(kCpu, cpu);
    pod.limits.Set(kCpu, cpu_limit);
    return pod;
  };
  cache.UpsertPod(pod_of("a", 1000, 2000));
  cache.UpsertPod(pod_of("b", 1000, 2000));
  cache.UpsertPod(pod_of("c", 1000, 3000));  // another limit
  cache.UpsertPod(pod_of("d", 2000, 2000));  // another request
  Pod gated = pod_of("e", 1000, 2000);
  gated.scheduling_gates = {"example.com/quota"};  // another constraint class
  cache.UpsertPod(gated);
  auto shapes = [&cache](Millis now) {
    ClusterSnapshot snap = cache.Snapshot(now);
    std::map<std::string, int32_t> out;
    for (const JobInfo& job : snap.jobs) out[job.name] = snap.tasks[job.tasks.front()].shape;
    return out;
  };
  std::map<std::string, int32_t> before = shapes(0);
  CHECK(before["a"] != kNoShape);
  CHECK(before["a"] == before["b"]);
  CHECK(before["a"] != before["c"]);
  CHECK(before["a"] != before["d"]);
  CHECK(before["a"] != before["e"]);
  CHECK(before["c"] != before["d"]);
  cache.UpsertPod(pod_of("b", 2000, 2000));  // b now asks what d asks
  std::map<std::string, int32_t> after = shapes(1000);
  CHECK(after["b"] == before["d"]);
  CHECK(after["a"] == before["a"]);
}

TEST_CASE("a task's role index is its role's place among its job's minTaskMember, or none") {
  testing::ClusterBuilder b;
  b.Job("j", {.min = 3,
              .tasks = {{"ps", 1, "cpu=1"}, {"worker", 2, "cpu=1"}, {"chief", 1, "cpu=1"}},
              .min_task_member = {{"worker", 2}, {"ps", 1}}});  // chief has no minimum
  ClusterSnapshot snap = b.cache().Snapshot(0);
  REQUIRE(snap.jobs.size() == 1);
  std::map<std::string, int32_t> index;  // role -> role_index
  for (TaskId t : snap.jobs[0].tasks) index[snap.tasks[t].role] = snap.tasks[t].role_index;
  CHECK(index == std::map<std::string, int32_t>{{"chief", kNoRoleMinimum}, {"ps", 0}, {"worker", 1}});
}

TEST_CASE("a snapshot built over a spent one is the snapshot built afresh") {
  ClusterCache cache;
  for (const char* name : {"n1", "n2"}) AddNode(cache, name, 8000);
  AddLonePod(cache, "a-long-name-that-does-not-fit-inline", "n1");
  AddLonePod(cache, "b", "n2");
  AddLonePod(cache, "c", "");
  ClusterSnapshot spent = cache.Snapshot(0);
  // What a session leaves behind: states changed, a task placed (Session::TakeCluster marks the
  // jobs it changed).
  spent.job_as_laid_out.assign(spent.jobs.size(), 0);
  for (TaskInfo& task : spent.tasks) task.status = TaskStatus::kReleasing;
  spent.tasks.back().node = 0;
  spent.nodes[0].tasks.push_back(spent.tasks.back().id);
  spent.jobs.front().last_scale_time = 99;  // a session's scaling, which the cache did not record
  spent.jobs.front().status_count.fill(7);
  for (NodeInfo& node : spent.nodes) {
    node.pipelined.Set(kCpu, 500);
    node.releasing.Set(kCpu, 700);
    node.used.Set(kMemory, 1);
    node.used_limits.Set(kCpu, 3);
    ++node.pod_count;
    ++node.releasing_pods;
    ++node.pipelined_pods;
    node.tasks.push_back(0);
    node.held_version = 0;  // as a session marks a node it changed (Session::TakeCluster)
  }
  // The cluster moves on: one job gone, one that sorts first arrives.
  cache.DeletePod("default", "b");
  AddLonePod(cache, "0-first", "n2");
  ClusterSnapshot reused = cache.Snapshot(1000, std::move(spent));
  ClusterSnapshot fresh = cache.Snapshot(1000);
  CHECK(DescribeSnapshot(reused) == DescribeSnapshot(fresh));
  CHECK(reused.jobs.size() == 3);
  // Nothing changed in the cache: every job's tasks are in place, and what a session changed of
  // them (status, node) is reset.
  reused.job_as_laid_out.assign(reused.jobs.size(), 0);
  for (TaskInfo& task : reused.tasks) task.status = TaskStatus::kReleasing;
  for (NodeInfo& node : reused.nodes) {
    node.pipelined.Set(kCpu, 500);
    node.held_version = 0;
  }
  reused.tasks.back().node = 1;  // "c", pending
  for (JobInfo& job : reused.jobs) {  // and of the jobs: counts, phase, scale time
    job.status_count.fill(7);
    job.allocated.Set(kCpu, 123);
    job.request.Set(kCpu, 456);
    job.phase = PodGroupPhase::kRunning;
    job.last_scale_time = 99;
  }
  ClusterSnapshot again = cache.Snapshot(2000, std::move(reused));
  CHECK(DescribeSnapshot(again) == DescribeSnapshot(cache.Snapshot(2000)));

  // A reason the owner took reaches the job in place, and only that job, though no session
  // changed it: "c" holds no node, so its block is otherwise not read.
  cache.NoteWaitReported("default/c", WaitReason{.kind = WaitKind::kQueueClosed, .subject = "default"});
  ClusterSnapshot noted = cache.Snapshot(3000, std::move(again));
  CHECK(DescribeSnapshot(noted) == DescribeSnapshot(cache.Snapshot(3000)));
  int reported = 0;
  for (const JobInfo& job : noted.jobs) reported += job.reported_wait != nullptr ? 1 : 0;
  CHECK(reported == 1);
}

TEST_CASE("jobs that stay are moved to their places when others come and go before them") {
  // Jobs of 0 to 3 pods; between snapshots some go and some come, so that of the jobs that stay
  // some move towards the front and some towards the back, in slots and in task offsets.
  ClusterCache cache;
  AddNode(cache, "n1", 64000);
  auto add_job = [&](const std::string& name, int pods) {
    PodGroup group;
    group.meta.name = name;
    group.meta.namespace_ = "default";
    group.meta.uid = "g-" + name;
    group.queue = "default";
    group.min_member = std::max(pods, 1);
    cache.UpsertPodGroup(group);
    for (int i = 0; i < pods; ++i) {
      Pod pod = LonePod(name + "-w-" + std::to_string(i));
      pod.meta.annotations[kGroupNameAnnotation] = name;
      pod.requests.Set(kCpu, 1000);
      if (i == 0 && pods == 2) {
        pod.node_name = "n1";
        pod.phase = PodPhase::kRunning;
      }
      cache.UpsertPod(pod);
    }
  };
  auto delete_job = [&](const std::string& name, int pods) {
    for (int i = 0; i < pods; ++i) cache.DeletePod("default", name + "-w-" + std::to_string(i));
    cache.DeletePodGroup("default", name);
  };
  for (const auto& [name, pods] : {std::pair{"b", 2}, {"d", 0}, {"f", 3}, {"h", 1}, {"j", 0}, {"l", 2}, {"n", 1}}) {
    add_job(name, pods);
  }
  ClusterSnapshot spent = cache.Snapshot(0);
  REQUIRE(spent.jobs.size() == 7);
  // A session changed the jobs that hold a node ("b", "l"), and "f"; the others are as laid out,
  // and are moved without being laid out again.
  for (const JobInfo& job : spent.jobs) {
    if (job.name != "b" && job.name != "l" && job.name != "f") continue;
    spent.job_as_laid_out[job.id] = 0;
    for (TaskId t : job.tasks) spent.tasks[t].status = TaskStatus::kReleasing;
  }
  delete_job("b", 2);  // the jobs after it move towards the front...
  add_job("e", 3);     // ...and after this one towards the back again, by more
  delete_job("j", 0);
  add_job("k", 0);
  delete_job("n", 1);
  add_job("o", 2);
  ClusterSnapshot reused = cache.Snapshot(1000, std::move(spent));
  CHECK(DescribeSnapshot(reused) == DescribeSnapshot(cache.Snapshot(1000)));
  for (size_t t = 0; t < reused.tasks.size(); ++t) {
    const TaskInfo& task = reused.tasks[t];
    CHECK(task.id == static_cast<TaskId>(t));
    CHECK(task.name().rfind(reused.jobs[task.job].name + "-w-", 0) == 0);
  }
  // And back: all but two jobs go, and the snapshot shrinks.
  for (const auto& [name, pods] : {std::pair{"d", 0}, {"e", 3}, {"f", 3}, {"h", 1}, {"k", 0}}) delete_job(name, pods);
  ClusterSnapshot shrunk = cache.Snapshot(2000, std::move(reused));
  CHECK(DescribeSnapshot(shrunk) == DescribeSnapshot(cache.Snapshot(2000)));
  CHECK(shrunk.jobs.size() == 2);
}

TEST_CASE("a reported reason is kept until the job's objects change") {
  ClusterCache cache;
  Pod pod = LonePod("c");
  pod.requests.Set(kCpu, 1000);
  cache.UpsertPod(pod);
  const std::string key = cache.Snapshot(0).jobs.at(0).key();
  const WaitReason closed{.kind = WaitKind::kQueueClosed, .subject = "default"};
  cache.NoteWaitReported(key, closed);
  REQUIRE(cache.Snapshot(1).jobs.at(0).reported_wait != nullptr);
  CHECK(*cache.Snapshot(1).jobs.at(0).reported_wait == closed);

  // The pod changed: the next session tells the owner its reason again.
  pod.requests.Set(kCpu, 2000);
  cache.UpsertPod(pod);
  CHECK(cache.Snapshot(2).jobs.at(0).reported_wait == nullptr);
  // Noted while the job waits to be rebuilt: not kept (the rebuild would drop it).
  cache.UpsertPod(pod);
  cache.NoteWaitReported(key, closed);
  CHECK(cache.Snapshot(3).jobs.at(0).reported_wait == nullptr);
  // Unknown jobs are ignored.
  cache.NoteWaitReported("default/nobody", closed);
  CHECK(cache.Snapshot(4).jobs.size() == 1);
}

TEST_CASE("jobs that reported equal reasons share one reported object, and unequal ones do not") {
  ClusterCache cache;
  for (const char* name : {"a", "b", "c"}) {
    Pod pod = LonePod(name);
    pod.requests.Set(kCpu, 1000);
    cache.UpsertPod(pod);
  }
  const ClusterSnapshot first = cache.Snapshot(0);
  const WaitReason closed{.kind = WaitKind::kQueueClosed, .subject = "default"};
  const WaitReason other_queue{.kind = WaitKind::kQueueClosed, .subject = "other"};
  cache.NoteWaitReported(first.jobs.at(0).key(), closed);
  cache.NoteWaitReported(first.jobs.at(1).key(), WaitReason(closed));
  cache.NoteWaitReported(first.jobs.at(2).key(), other_queue);
  const ClusterSnapshot noted = cache.Snapshot(1);
  REQUIRE(noted.jobs.at(0).reported_wait != nullptr);
  CHECK(noted.jobs.at(0).reported_wait == noted.jobs.at(1).reported_wait);  // one object
  REQUIRE(noted.jobs.at(2).reported_wait != nullptr);
  CHECK(*noted.jobs.at(2).reported_wait == other_queue);
  CHECK(*noted.jobs.at(0).reported_wait == closed);
  // Reported again by other jobs: the object job c holds is shared, whoever reports it.
  cache.NoteWaitReported(first.jobs.at(0).key(), other_queue);
  cache.NoteWaitReported(first.jobs.at(1).key(), other_queue);
  const ClusterSnapshot moved = cache.Snapshot(2);
  CHECK(moved.jobs.at(0).reported_wait == moved.jobs.at(2).reported_wait);
  CHECK(moved.jobs.at(1).reported_wait == moved.jobs.at(2).reported_wait);
  // No job holds `closed` any longer: reported again, it is made anew.
  cache.NoteWaitReported(first.jobs.at(2).key(), closed);
  CHECK(*cache.Snapshot(3).jobs.at(2).reported_wait == closed);
}

// A PodGroup job in the default queue without pods yet (as operators leave them until it is
// admitted), with minResources `cpu` millicores.
PodGroup PendingGroup(const std::string& name, int64_t cpu) {
  PodGroup group;
  group.meta.name = name;
  group.meta.namespace_ = "default";
  group.meta.uid = "g-" + name;
  group.queue = "default";
  group.min_member = 1;
  group.min_resources.Set(kCpu, cpu);
  return group;
}

std::vector<std::string> JobNames(const ClusterSnapshot& snapshot) {
  std::vector<std::string> names;
  for (const JobInfo& job : snapshot.jobs) names.push_back(job.name);
  return names;
}

// The parked jobs a snapshot names: key and class.
std::vector<std::pair<std::string, int32_t>> Parked(const ClusterSnapshot& snapshot) {
  std::vector<std::pair<std::string, int32_t>> parked;
  for (const ClusterSnapshot::ParkedJob& job : snapshot.parked) {
    parked.emplace_back(std::string(job.key), job.parked_class);
  }
  return parked;
}

// Whether the snapshot's per-class counts (what a session's opening reads) say how many of its
// parked jobs each class has.
bool ParkedCountsHold(const ClusterSnapshot& snapshot) {
  std::vector<int32_t> counted(snapshot.parked_representatives.size(), 0);
  for (const ClusterSnapshot::ParkedJob& job : snapshot.parked) ++counted.at(static_cast<size_t>(job.parked_class));
  return snapshot.parked_counts == counted;
}

TEST_CASE("a session that needs some parked classes back gets those alone; gone classes are numbered anew") {
  using Layout = ClusterCache::Layout;
  using Names = std::vector<std::string>;
  using ParkedList = std::vector<std::pair<std::string, int32_t>>;
  ClusterCache cache;
  AddNode(cache, "n1", 64000);
  for (const char* name : {"x1", "x2", "x3", "x4"}) cache.UpsertPodGroup(PendingGroup(name, 8000));
  for (const char* name : {"y1", "y2", "y3", "y4"}) cache.UpsertPodGroup(PendingGroup(name, 4000));
  REQUIRE(JobNames(cache.Snapshot(0)) == Names{"x1", "x2", "x3", "x4", "y1", "y2", "y3", "y4"});
  cache.ParkJobs(1, {0, 2, 3});  // x2 stands for x3 and x4: class 0
  cache.ParkJobs(5, {4, 6, 7});  // y2 for y3 and y4: class 1
  ClusterSnapshot left = cache.Snapshot(1, {}, Layout::kLeaveOutParked);
  REQUIRE(Parked(left) == ParkedList{{"default/x3", 0}, {"default/x4", 0}, {"default/y3", 1}, {"default/y4", 1}});
  CHECK(left.parked_counts == std::vector<int32_t>{2, 2});
  cache.UnparkClasses({0});
  left = cache.Snapshot(2, std::move(left), Layout::kLeaveOutParked);
  CHECK(JobNames(left) == Names{"x1", "x2", "x3", "x4", "y1", "y2"});
  CHECK(Parked(left) == ParkedList{{"default/y3", 1}, {"default/y4", 1}});
  CHECK(left.parked_representatives == std::vector<JobId>{kNoId, 5});
  CHECK(left.parked_counts == std::vector<int32_t>{0, 2});

  // The x class parked and needed back again and again: the y class stays as it is, and the
  // lists a session sizes by class stay short.
  size_t most_classes = 0;
  for (int i = 0; i < 100; ++i) {
    cache.ParkJobs(1, {0, 2, 3});  // ids of the snapshot laid out last: x1..x4 are 0..3
    left = cache.Snapshot(3 + 2 * i, std::move(left), Layout::kLeaveOutParked);
    REQUIRE(Parked(left).size() == 4);
    const int32_t x_class = Parked(left).front().second;
    const int32_t y_class = Parked(left).back().second;
    CHECK(Parked(left) == ParkedList{{"default/x3", x_class}, {"default/x4", x_class}, {"default/y3", y_class},
                                     {"default/y4", y_class}});
    CHECK(left.parked_representatives.at(static_cast<size_t>(x_class)) == 1);
    CHECK(left.parked_representatives.at(static_cast<size_t>(y_class)) == 3);  // x3 and x4 left out
    CHECK(left.parked_last.at(static_cast<size_t>(y_class)).key == "default/y4");
    CHECK(ParkedCountsHold(left));
    most_classes = std::max(most_classes, left.parked_representatives.size());
    cache.UnparkClasses({x_class});
    left = cache.Snapshot(4 + 2 * i, std::move(left), Layout::kLeaveOutParked);
    REQUIRE(JobNames(left) == Names{"x1", "x2", "x3", "x4", "y1", "y2"});
  }
  CHECK(most_classes <= 64);
}

TEST_CASE("parked jobs are left out until they, their class's first two jobs or every block changes") {
  using Layout = ClusterCache::Layout;
  using Names = std::vector<std::string>;
  using ParkedList = std::vector<std::pair<std::string, int32_t>>;
  ClusterCache cache;
  AddNode(cache, "n1", 64000);
  for (const char* name : {"a", "b", "c", "d", "e"}) cache.UpsertPodGroup(PendingGroup(name, 8000));
  const Names every_job{"a", "b", "c", "d", "e"};
  REQUIRE(JobNames(cache.Snapshot(0)) == every_job);
  CHECK_FALSE(cache.AnyParked());

  // Two alike jobs make no class: the first of a class stays laid out, the second stands for it.
  cache.ParkJobs(1, {2});
  CHECK_FALSE(cache.AnyParked());
  // b, c, d and e alike (ids of the snapshot laid out last), named in any order: b, first in
  // arrival, stays; c stands for d and e.
  cache.ParkJobs(3, {4, 1, 2});
  CHECK(cache.AnyParked());
  ClusterSnapshot left = cache.Snapshot(1, {}, Layout::kLeaveOutParked);
  CHECK(JobNames(left) == Names{"a", "b", "c"});
  CHECK(Parked(left) == ParkedList{{"default/d", 0}, {"default/e", 0}});
  CHECK(left.parked_representatives == std::vector<JobId>{2});
  CHECK(left.parked_last.at(0).key == "default/e");  // the class's last member in arrival
  // What they ask of their queue is counted all the same.
  CHECK(left.queue_demand.at(static_cast<size_t>(left.FindQueue("default"))).Get(kCpu) == 5 * 8000);
  // The other layout lays out every job, and names none parked.
  ClusterSnapshot every = cache.Snapshot(2);
  CHECK(JobNames(every) == every_job);
  CHECK(every.parked.empty());

  // A job laid out for a class is not parked in another, nor a parked job again; a job alike
  // that comes before the representative (a) stays laid out, one after it (f) joins the class.
  cache.UpsertPodGroup(PendingGroup("f", 8000));
  every = cache.Snapshot(3, std::move(every));
  cache.ParkJobs(0, {1, 2, 3, 5});
  left = cache.Snapshot(4, std::move(left), Layout::kLeaveOutParked);
  CHECK(JobNames(left) == Names{"a", "b", "c"});
  CHECK(Parked(left) == ParkedList{{"default/d", 0}, {"default/e", 0}, {"default/f", 0}});
  CHECK(left.parked_last.at(0).key == "default/f");
  CHECK(left.parked_representatives == std::vector<JobId>{2});

  // A member whose PodGroup changed comes back alone.
  cache.UpsertPodGroup(PendingGroup("e", 4000));
  left = cache.Snapshot(5, std::move(left), Layout::kLeaveOutParked);
  CHECK(JobNames(left) == Names{"a", "b", "c", "e"});
  CHECK(Parked(left) == ParkedList{{"default/d", 0}, {"default/f", 0}});
  CHECK(left.parked_last.at(0).key == "default/f");
  // The first job changed (admitted, say): the representative is laid out first, and the next
  // member in arrival stands for the class.
  cache.UpsertPodGroup(PendingGroup("b", 4000));
  left = cache.Snapshot(6, std::move(left), Layout::kLeaveOutParked);
  CHECK(JobNames(left) == Names{"a", "b", "c", "d", "e"});
  CHECK(Parked(left) == ParkedList{{"default/f", 0}});
  CHECK(left.parked_representatives == std::vector<JobId>{3});
  CHECK(left.parked_last.at(0).key == "default/f");
  // The representative changed: its class comes back.
  cache.UpsertPodGroup(PendingGroup("d", 4000));
  left = cache.Snapshot(7, std::move(left), Layout::kLeaveOutParked);
  CHECK(JobNames(left) == Names{"a", "b", "c", "d", "e", "f"});
  CHECK(left.parked.empty());
  CHECK_FALSE(cache.AnyParked());
  // So does the class whose first job changes when no member is left to stand for it.
  every = cache.Snapshot(8, std::move(every));
  cache.ParkJobs(0, {1, 2});
  left = cache.Snapshot(9, std::move(left), Layout::kLeaveOutParked);
  REQUIRE(Parked(left) == ParkedList{{"default/c", 1}});
  cache.UpsertPodGroup(PendingGroup("c", 2000));
  cache.UpsertPodGroup(PendingGroup("a", 2000));
  left = cache.Snapshot(10, std::move(left), Layout::kLeaveOutParked);
  CHECK(JobNames(left) == Names{"a", "b", "c", "d", "e", "f"});
  CHECK_FALSE(cache.AnyParked());

  // Every block rebuilt (a queue came) brings every job back, and so does UnparkAll.
  every = cache.Snapshot(11, std::move(every));
  cache.ParkJobs(0, {1, 2, 3});
  REQUIRE(cache.AnyParked());
  Queue research;
  research.meta.name = "research";
  cache.UpsertQueue(research);
  CHECK(JobNames(cache.Snapshot(12, {}, Layout::kLeaveOutParked)) == Names{"a", "b", "c", "d", "e", "f"});
  CHECK_FALSE(cache.AnyParked());
  cache.ParkJobs(0, {1, 2, 3});
  REQUIRE(cache.AnyParked());
  cache.UnparkAll();
  CHECK_FALSE(cache.AnyParked());
  CHECK(JobNames(cache.Snapshot(13, {}, Layout::kLeaveOutParked)) == Names{"a", "b", "c", "d", "e", "f"});
}

TEST_CASE("each layout laid over its own spent snapshot carries the reasons reported since") {
  using Layout = ClusterCache::Layout;
  ClusterCache cache;
  for (const char* name : {"a", "b", "c"}) cache.UpsertPodGroup(PendingGroup(name, 8000));
  ClusterSnapshot every = cache.Snapshot(0);
  cache.ParkJobs(0, {1, 2});
  ClusterSnapshot left = cache.Snapshot(1, {}, Layout::kLeaveOutParked);
  REQUIRE(JobNames(left) == std::vector<std::string>{"a", "b"});
  const WaitReason closed{.kind = WaitKind::kQueueClosed, .subject = "default"};
  cache.NoteWaitReported("default/b", closed);
  cache.NoteWaitReported("default/c", closed);
  // The layouts alternate, as the simulator's do when a parked session needs every job.
  left = cache.Snapshot(2, std::move(left), Layout::kLeaveOutParked);
  REQUIRE(left.jobs.at(1).reported_wait != nullptr);
  CHECK(*left.jobs.at(1).reported_wait == closed);
  every = cache.Snapshot(3, std::move(every));
  for (size_t j : {1, 2}) {
    REQUIRE(every.jobs.at(j).reported_wait != nullptr);
    CHECK(*every.jobs.at(j).reported_wait == closed);
  }
}

TEST_CASE("a pod whose node is deleted fails, and its job counts it failed, not placed") {
  ClusterCache cache;
  AddNode(cache, "n1", 8000);
  Pod pod = LonePod("runner");
  pod.requests.Set(kCpu, 1000);
  pod.node_name = "n1";
  pod.phase = PodPhase::kRunning;
  cache.UpsertPod(pod);
  ClusterSnapshot before = cache.Snapshot(0);
  REQUIRE(before.jobs.size() == 1);
  CHECK(before.jobs[0].PlacedCount() == 1);
  CHECK(before.jobs[0].allocated.Get(kCpu) == 1000);

  cache.DeleteNode("n1");
  for (ClusterSnapshot after : {cache.Snapshot(1000), cache.Snapshot(1000, std::move(before))}) {
    REQUIRE(after.jobs.size() == 1);
    const JobInfo& job = after.jobs[0];
    CHECK(after.tasks[job.tasks[0]].status == TaskStatus::kFailed);
    CHECK(job.Count(TaskStatus::kFailed) == 1);
    CHECK(job.PlacedCount() == 0);
    CHECK(job.allocated.IsZero());
    CHECK(job.request.IsZero());
  }
}

TEST_CASE("each queue's demand is what its jobs ask for, as jobs and nodes come, change and go") {
  ClusterCache cache;
  AddNode(cache, "n1", 64000);
  AddNode(cache, "n2", 64000);
  Queue research;
  research.meta.name = "research";
  cache.UpsertQueue(research);
  // A PodGroup job of `pods` pods of 1 cpu, minMember `min`, minResources 8 cpu; pods from
  // `first_placed` on run on n2.
  auto add_job = [&](const std::string& name, const std::string& queue, int pods, int min, int first_placed) {
    PodGroup group;
    group.meta.name = name;
    group.meta.namespace_ = "default";
    group.meta.uid = "g-" + name;
    group.queue = queue;
    group.min_member = min;
    group.min_resources.Set(kCpu, 8000);
    cache.UpsertPodGroup(group);
    for (int i = 0; i < pods; ++i) {
      Pod pod = LonePod(name + "-w-" + std::to_string(i));
      pod.meta.annotations[kGroupNameAnnotation] = name;
      pod.requests.Set(kCpu, 1000);
      if (i >= first_placed) {
        pod.node_name = "n2";
        pod.phase = PodPhase::kRunning;
      }
      cache.UpsertPod(pod);
    }
  };
  // What summing the snapshot's jobs gives, per queue name (a name with none: no entry).
  auto summed = [](const ClusterSnapshot& snap) {
    std::map<std::string, int64_t> cpu;
    for (const JobInfo& job : snap.jobs) {
      if (job.queue == kNoId) continue;
      Resources grown;
      cpu[snap.queues[job.queue].name] += JobDemand(job, job.tasks.size(), grown).Get(kCpu);
    }
    return cpu;
  };
  // A per-queue vector the cache kept, in cpu by queue name (zero: no entry).
  auto by_name = [](const ClusterSnapshot& snap, const std::vector<Resources>& per_queue) {
    std::map<std::string, int64_t> cpu;
    REQUIRE(per_queue.size() == snap.queues.size());
    for (const QueueInfo& queue : snap.queues) {
      if (per_queue[queue.id].Get(kCpu) != 0) cpu[queue.name] = per_queue[queue.id].Get(kCpu);
    }
    return cpu;
  };
  auto kept = [&](const ClusterSnapshot& snap) { return by_name(snap, snap.queue_demand); };
  // The same for what the jobs' placed pods hold (JobInfo::allocated).
  auto held_summed = [](const ClusterSnapshot& snap) {
    std::map<std::string, int64_t> cpu;
    for (const JobInfo& job : snap.jobs) {
      if (job.queue != kNoId && job.allocated.Get(kCpu) != 0) cpu[snap.queues[job.queue].name] += job.allocated.Get(kCpu);
    }
    return cpu;
  };
  auto held_kept = [&](const ClusterSnapshot& snap) { return by_name(snap, snap.queue_allocated); };
  add_job("gang", "research", 4, 4, 4);      // all its pods: their requests, 4 cpu
  add_job("short", "research", 2, 4, 2);     // fewer pods than its min: minResources, 8 cpu
  add_job("running", "default", 3, 2, 0);    // on n2: 3 cpu
  add_job("lost", "nowhere", 2, 2, 2);       // a queue that does not exist: no queue's demand
  Pod lone = LonePod("lone");
  lone.requests.Set(kCpu, 500);
  cache.UpsertPod(lone);                     // the default queue's
  ClusterSnapshot snap = cache.Snapshot(0);
  CHECK(kept(snap) == std::map<std::string, int64_t>{{"default", 3500}, {"research", 12000}});
  CHECK(held_kept(snap) == std::map<std::string, int64_t>{{"default", 3000}});  // "running": 3 pods on n2
  CHECK(kept(snap) == summed(snap));
  CHECK(held_kept(snap) == held_summed(snap));

  // A pod more for "short" still leaves it short; "gang" loses a pod to a deletion (short too);
  // "lost" goes; a job arrives in "research".
  add_job("short", "research", 3, 4, 3);
  cache.DeletePod("default", "gang-w-3");
  cache.DeletePodGroup("default", "lost");
  add_job("new", "research", 1, 1, 1);
  snap = cache.Snapshot(1000, std::move(snap));
  CHECK(kept(snap) == summed(snap));
  CHECK(held_kept(snap) == held_summed(snap));
  CHECK(kept(snap).at("research") == 8000 + 8000 + 1000);  // "gang" is short of its min now

  // n2 is deleted: "running"'s pods fail there and ask for nothing more, though their block
  // (and the snapshot laid over the last one) still names the node.
  cache.DeleteNode("n2");
  snap = cache.Snapshot(2000, std::move(snap));
  CHECK(kept(snap) == summed(snap));
  CHECK(held_kept(snap) == held_summed(snap));
  CHECK(kept(snap).at("default") == 500);
  CHECK(held_kept(snap).empty());  // its pods failed with their node
  snap = cache.Snapshot(3000, std::move(snap));  // as laid out, nothing changed
  CHECK(kept(snap) == summed(snap));
  CHECK(held_kept(snap) == held_summed(snap));

  // The queue "nowhere" appears: every job is laid out again.
  add_job("lost", "nowhere", 2, 2, 2);
  Queue nowhere;
  nowhere.meta.name = "nowhere";
  cache.UpsertQueue(nowhere);
  snap = cache.Snapshot(4000, std::move(snap));
  CHECK(kept(snap) == summed(snap));
  CHECK(held_kept(snap) == held_summed(snap));
  CHECK(kept(snap).at("nowhere") == 2000);
}

TEST_CASE("jobs holding nodes that no session changed stay as laid out, and their nodes' sums follow the cache") {
  ClusterCache cache;
  for (const char* name : {"n1", "n2"}) AddNode(cache, name, 8000);
  auto add_pod = [&](const std::string& name, const std::string& node, bool releasing = false) {
    Pod pod = LonePod(name);
    pod.requests.Set(kCpu, 1000);
    pod.limits.Set(kCpu, 2000);
    pod.node_name = node;
    pod.phase = node.empty() ? PodPhase::kPending : PodPhase::kRunning;
    pod.meta.deleting = releasing;
    cache.UpsertPod(pod);
  };
  add_pod("a-runs", "n1");
  add_pod("b-runs", "n2");
  add_pod("c-leaves", "n1", /*releasing=*/true);
  add_pod("d-early", "n3");  // bound to a node the cache has not seen yet
  Pod foreign = LonePod("e-foreign");
  foreign.scheduler_name = "default-scheduler";
  foreign.requests.Set(kCpu, 500);
  foreign.node_name = "n2";
  foreign.phase = PodPhase::kRunning;
  cache.UpsertPod(foreign);
  // No session: every job is as laid out, and each snapshot is laid over the one before.
  ClusterSnapshot snap = cache.Snapshot(0);
  CHECK(DescribeSnapshot(snap) == DescribeSnapshot(cache.Snapshot(0)));
  auto next = [&](Millis now) {
    REQUIRE(std::all_of(snap.job_as_laid_out.begin(), snap.job_as_laid_out.end(), [](bool kept) { return kept; }));
    snap = cache.Snapshot(now, std::move(snap));
    INFO("snapshot at " << now);
    CHECK(DescribeSnapshot(snap) == DescribeSnapshot(cache.Snapshot(now)));
  };
  cache.DeletePod("default", "c-leaves");  // n1 frees what it held
  add_pod("f-new", "n2");
  next(1000);
  const NodeInfo& n1 = snap.nodes[snap.FindNode("n1")];
  CHECK(n1.used.Get(kCpu) == 1000);
  CHECK(n1.used_limits.Get(kCpu) == 2000);
  CHECK(n1.pod_count == 1);
  CHECK(n1.releasing_pods == 0);
  CHECK(snap.nodes[snap.FindNode("n2")].used.Get(kCpu) == 2500);  // two of ours and the foreign pod
  AddNode(cache, "n0", 8000);  // sorts first: every node id moves
  AddNode(cache, "n3", 8000);  // the early pod's node arrives
  next(2000);
  const NodeInfo& n3 = snap.nodes[snap.FindNode("n3")];
  CHECK(n3.pod_count == 1);
  CHECK(n3.used.Get(kCpu) == 1000);
  REQUIRE(snap.FindNode("n0") == 0);
  CHECK(snap.tasks[snap.jobs[snap.FindJob("default/a-runs")].tasks.front()].node == snap.FindNode("n1"));
  cache.DeleteNode("n2");  // its pods fail, and what they held is kept aside for the name
  next(3000);
  CHECK(snap.tasks[snap.jobs[snap.FindJob("default/b-runs")].tasks.front()].status == TaskStatus::kFailed);
  AddNode(cache, "n2", 8000);  // back: its pods hold it again
  next(4000);
  CHECK(snap.nodes[snap.FindNode("n2")].used.Get(kCpu) == 2500);
  CHECK(snap.nodes[snap.FindNode("n2")].pod_count == 3);
  foreign.phase = PodPhase::kSucceeded;  // another scheduler's pod finished: it holds nothing
  cache.UpsertPod(foreign);
  next(4500);
  CHECK(snap.nodes[snap.FindNode("n2")].used.Get(kCpu) == 2000);
  CHECK(snap.nodes[snap.FindNode("n2")].pod_count == 2);
  Node bigger;
  bigger.meta.name = "n1";
  bigger.allocatable.Set(kCpu, 16000);
  cache.UpsertNode(bigger);  // a node object replaced: what is made of it is laid out anew
  next(5000);
  CHECK(snap.nodes[snap.FindNode("n1")].allocatable.Get(kCpu) == 16000);
  CHECK(snap.total_allocatable.Get(kCpu) == 16000 + 3 * 8000);  // n0, n2, n3 and the bigger n1
}

TEST_CASE("running jobs no session changed keep their nodes' task lists right when an earlier job goes") {
  ClusterCache cache;
  for (const char* name : {"n1", "n2"}) AddNode(cache, name, 8000);
  auto add_pod = [&](const std::string& name, const std::string& group, const std::string& node) {
    Pod pod = LonePod(name);
    if (!group.empty()) pod.meta.annotations[kGroupNameAnnotation] = group;
    pod.requests.Set(kCpu, 1000);
    pod.node_name = node;
    pod.phase = PodPhase::kRunning;
    cache.UpsertPod(pod);
  };
  PodGroup gang;
  gang.meta.name = "b-gang";
  gang.meta.namespace_ = "default";
  gang.meta.uid = "g-b-gang";
  gang.queue = "default";
  gang.min_member = 2;
  cache.UpsertPodGroup(gang);
  add_pod("a-first", "", "n2");
  add_pod("b-gang-0", "b-gang", "n2");  // its second task is the one on n1
  add_pod("b-gang-1", "b-gang", "n1");
  add_pod("c-runs", "", "n2");
  ClusterSnapshot snap = cache.Snapshot(0);
  REQUIRE(std::all_of(snap.job_as_laid_out.begin(), snap.job_as_laid_out.end(), [](bool kept) { return kept; }));
  cache.DeletePod("default", "a-first");  // the others' task ids move; the node set does not change
  snap = cache.Snapshot(1000, std::move(snap));
  CHECK(DescribeSnapshot(snap) == DescribeSnapshot(cache.Snapshot(1000)));
  auto on = [&](const char* node) {
    std::vector<std::string> keys;
    for (TaskId t : snap.nodes[snap.FindNode(node)].tasks) keys.push_back(snap.tasks[t].key());
    return keys;
  };
  CHECK(on("n1") == std::vector<std::string>{"default/b-gang-1"});
  CHECK(on("n2") == std::vector<std::string>{"default/b-gang-0", "default/c-runs"});
}

TEST_CASE("nodes' task lists are kept from the spent snapshot only while no task on them changes its id") {
  ClusterCache cache;
  for (const char* name : {"n1", "n2"}) AddNode(cache, name, 8000);
  AddLonePod(cache, "b-runs", "n1");
  AddLonePod(cache, "c-runs", "n2");
  AddLonePod(cache, "d-runs", "n1");
  ClusterSnapshot snap = cache.Snapshot(0);
  auto on = [&](const char* node) {
    std::vector<std::string> keys;
    for (TaskId t : snap.nodes[snap.FindNode(node)].tasks) keys.push_back(snap.tasks[t].key());
    return keys;
  };
  // A job that sorts last and holds nothing: every task keeps its id, the lists stay.
  AddLonePod(cache, "z-waits", "");
  snap = cache.Snapshot(1000, std::move(snap));
  CHECK(DescribeSnapshot(snap) == DescribeSnapshot(cache.Snapshot(1000)));
  CHECK(on("n1") == std::vector<std::string>{"default/b-runs", "default/d-runs"});
  // One that sorts first: every id moves, and the lists with them.
  AddLonePod(cache, "a-waits", "");
  snap = cache.Snapshot(2000, std::move(snap));
  CHECK(DescribeSnapshot(snap) == DescribeSnapshot(cache.Snapshot(2000)));
  CHECK(on("n1") == std::vector<std::string>{"default/b-runs", "default/d-runs"});
  CHECK(on("n2") == std::vector<std::string>{"default/c-runs"});
  // The last job goes: nothing else moves.
  cache.DeletePod("default", "z-waits");
  snap = cache.Snapshot(3000, std::move(snap));
  CHECK(DescribeSnapshot(snap) == DescribeSnapshot(cache.Snapshot(3000)));
  // A running job that sorts last arrives: its node's list grows.
  AddLonePod(cache, "e-runs", "n2");
  snap = cache.Snapshot(4000, std::move(snap));
  CHECK(DescribeSnapshot(snap) == DescribeSnapshot(cache.Snapshot(4000)));
  CHECK(on("n2") == std::vector<std::string>{"default/c-runs", "default/e-runs"});
}

TEST_CASE("snapshots lay out the queues as stored, linked anew once a queue is stored or deleted") {
  ClusterCache cache;
  auto queue_of = [](const std::string& name, const std::string& parent, int32_t weight) {
    Queue queue;
    queue.meta.name = name;
    queue.parent = parent;
    queue.weight = weight;
    return queue;
  };
  cache.UpsertQueue(queue_of("dept", "", 2));
  cache.UpsertQueue(queue_of("team", "dept", 1));
  ClusterSnapshot snap = cache.Snapshot(0);
  auto queue = [&](const char* name) -> const QueueInfo& { return snap.queues[snap.FindQueue(name)]; };
  REQUIRE(snap.queues.size() == 3);  // and default
  CHECK(queue("team").parent == snap.FindQueue("dept"));
  CHECK(queue("dept").children == std::vector<QueueId>{snap.FindQueue("team")});
  snap = cache.Snapshot(1000, std::move(snap));  // nothing stored since: the same queues
  REQUIRE(snap.queues.size() == 3);
  CHECK(queue("team").parent == snap.FindQueue("dept"));
  cache.UpsertQueue(queue_of("team", "dept", 5));  // stored again, with another weight
  cache.UpsertQueue(queue_of("a-first", "", 1));   // sorts first: every id moves
  snap = cache.Snapshot(2000, std::move(snap));
  REQUIRE(snap.queues.size() == 4);
  CHECK(queue("team").weight == 5);
  CHECK(queue("team").parent == snap.FindQueue("dept"));
  CHECK(queue("a-first").id == 0);
  cache.DeleteQueue("dept");  // its child's parent is gone
  snap = cache.Snapshot(3000, std::move(snap));
  REQUIRE(snap.queues.size() == 3);
  CHECK(snap.FindQueue("dept") == kNoId);
  CHECK(queue("team").broken == "queue team: parent queue dept does not exist");
}

TEST_CASE("a PodGroup's throughput reports reach its job; a bad value is a warning and no reports") {
  ClusterCache cache;
  PodGroup group;
  group.meta.name = "train";
  group.meta.namespace_ = "ml";
  group.meta.uid = "g1";
  group.queue = "default";
  auto job_of = [&](Millis now) {
    ClusterSnapshot snapshot = cache.Snapshot(now);
    return snapshot.jobs[snapshot.FindJob("ml/train")];
  };
  cache.UpsertPodGroup(group);
  CHECK_FALSE(job_of(0).measured);
  CHECK(ReadPodGroupAnnotations(group).warnings.empty());

  group.meta.annotations[kThroughputAnnotation] = "";  // will report, has not yet
  cache.UpsertPodGroup(group);
  CHECK(job_of(1).measured);
  CHECK(job_of(1).throughput.empty());

  group.meta.annotations[kThroughputAnnotation] = "2=18,1=10";
  cache.UpsertPodGroup(group);
  JobInfo measured = job_of(2);
  CHECK(measured.measured);
  CHECK(measured.throughput == std::vector<ThroughputPoint>{{1, 10}, {2, 18}});

  group.meta.annotations[kThroughputAnnotation] = "1=10,2=fast";
  group.meta.annotations[kElasticCooldownAnnotation] = "soon";
  cache.UpsertPodGroup(group);
  JobInfo bad = job_of(3);
  CHECK_FALSE(bad.measured);
  CHECK(bad.throughput.empty());
  CHECK(bad.cooldown_override == -1);
  CHECK(ReadPodGroupAnnotations(group).warnings ==
        std::vector<std::string>{
            "annotation lahar.sh/throughput: \"2=fast\": the throughput is not a finite non-negative number; the "
            "job is scheduled as if it were absent",
            "annotation lahar.sh/elastic-cooldown: " +
                std::string(ParseDuration("soon").status().message()) +
                "; the job is scheduled as if it were absent"});
}

}  // namespace
}  // namespace lahar
