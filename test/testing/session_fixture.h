// A session opened on a ClusterBuilder's snapshot, with lookups by name, for tests that call a
// plugin's hooks directly rather than running whole actions.
//
//   SessionFixture s(builder, kConfig);
//   CHECK(s->JobOrderLess(s.job("default/a"), s.job("default/b")));
//   CHECK(s.BestNode("default/a-worker-0") == "n2");
#ifndef LAHAR_TEST_TESTING_SESSION_FIXTURE_H_
#define LAHAR_TEST_TESTING_SESSION_FIXTURE_H_

#include <memory>
#include <string>
#include <string_view>

#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"

namespace lahar::testing {

class SessionFixture {
 public:
  // The configuration is parsed here and outlives the session that refers to it.
  SessionFixture(const ClusterBuilder& cluster, std::string_view config_yaml);

  Session* operator->() { return session_.get(); }
  Session& session() { return *session_; }

  // Lookups abort the test with a message when the object does not exist.
  const JobInfo& job(std::string_view key);
  const TaskInfo& task(std::string_view key);
  const QueueInfo& queue(std::string_view name);
  const NodeInfo& node(std::string_view name);

  // Moves a task to `status` on the first node (for hook tests that need placed tasks).
  void Place(std::string_view task_key, TaskStatus status = TaskStatus::kAllocated);
  // The session's status update for a job, or null.
  const JobStatusUpdate* update(std::string_view job_key);
  FitResult Fit(std::string_view task_key, std::string_view node_name);
  // The node FindBestNode picks for the task onto idle resources, or "none".
  std::string BestNode(std::string_view task_key);
  // The deserved share the plugins reported for a queue.
  Resources deserved(std::string_view queue_name);

 private:
  SchedulerConfig config_;
  std::unique_ptr<Session> session_;
};

}  // namespace lahar::testing

#endif  // LAHAR_TEST_TESTING_SESSION_FIXTURE_H_
