#include "test/testing/session_fixture.h"

#include <cstdio>
#include <cstdlib>

#include "scheduler/builtins.h"

namespace lahar::testing {
namespace {

[[noreturn]] void Fail(std::string_view what, std::string_view name) {
  std::fprintf(stderr, "test fixture: no %.*s %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(name.size()), name.data());
  std::abort();
}

}  // namespace

SessionFixture::SessionFixture(const ClusterBuilder& cluster, std::string_view config_yaml)
    : config_(MustParseConfig(config_yaml)) {
  auto session = Session::Open(cluster.Snapshot(), config_, BuiltinRegistry());
  if (!session.ok()) Fail("session:", session.status().message().data());
  session_ = std::move(*session);
}

const JobInfo& SessionFixture::job(std::string_view key) {
  JobId id = session_->cluster().FindJob(key);
  if (id == kNoId) Fail("job", key);
  return session_->job(id);
}

const TaskInfo& SessionFixture::task(std::string_view key) {
  for (const TaskInfo& t : session_->cluster().tasks) {
    if (t.key() == key) return t;
  }
  Fail("task", key);
}

const QueueInfo& SessionFixture::queue(std::string_view name) {
  QueueId id = session_->cluster().FindQueue(name);
  if (id == kNoId) Fail("queue", name);
  return session_->queue(id);
}

const NodeInfo& SessionFixture::node(std::string_view name) {
  NodeId id = session_->cluster().FindNode(name);
  if (id == kNoId) Fail("node", name);
  return session_->node(id);
}

void SessionFixture::Place(std::string_view task_key, TaskStatus status) {
  session_->SetTaskStatus(task(task_key).id, status, 0);
}

const JobStatusUpdate* SessionFixture::update(std::string_view job_key) {
  const JobId id = session_->cluster().FindJob(job_key);
  for (const JobStatusUpdate& u : session_->job_updates()) {
    if (u.job == id) return &u;
  }
  return nullptr;
}

FitResult SessionFixture::Fit(std::string_view task_key, std::string_view node_name) {
  return session_->Predicate(task(task_key), node(node_name));
}

std::string SessionFixture::BestNode(std::string_view task_key) {
  NodeId id = session_->FindBestNode(task(task_key), Placement::kIdle);
  return id == kNoId ? "none" : session_->node(id).name();
}

Resources SessionFixture::deserved(std::string_view queue_name) {
  auto it = session_->queue_deserved().find(queue(queue_name).id);
  if (it == session_->queue_deserved().end()) Fail("deserved share for queue", queue_name);
  return it->second;
}

}  // namespace lahar::testing
