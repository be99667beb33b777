// What the daemon shows of why jobs wait (spec 7): the reasons the sessions gave, the queues'
// figures and recent evictions, kept for /debug/explain, /debug/queues and /ui. The scheduling
// loop updates it after each session; HTTP handler threads read it.
#ifndef LAHAR_SCHEDULER_DAEMON_WAIT_BOARD_H_
#define LAHAR_SCHEDULER_DAEMON_WAIT_BOARD_H_

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/daemon/http_server.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/explain.h"

namespace lahar {

class WaitBoard {
 public:
  // `snapshot_now` takes a snapshot of the cache (under its lock) for an explanation.
  explicit WaitBoard(std::function<ClusterSnapshot()> snapshot_now) : snapshot_now_(std::move(snapshot_now)) {}

  // After a session: `snapshot` is the cluster it was given (before its decisions), `result`
  // what it decided. A job keeps its reason while it lacks its min and no session says
  // otherwise; a job that reached its min or is gone drops it.
  void Update(const ClusterSnapshot& snapshot, const CycleResult& result, Millis now);

  // GET /debug/explain?job=ns/name: the job's explanation as JSON (404 for an unknown job).
  HttpResponse Explain(const HttpRequest& request) const;
  // GET /debug/queues: the queue tree with each queue's figures and waiting jobs per kind.
  HttpResponse Queues(const HttpRequest& request) const;
  // GET /ui[?page=N]: one self-contained page that refreshes itself: the queue tree, waiting
  // jobs with their reasons (a page of them at a time), recent evictions with theirs.
  HttpResponse Page(const HttpRequest& request) const;

  static constexpr size_t kJobsPerPage = 200;
  static constexpr size_t kEvictionsKept = 100;

 private:
  struct QueueRow {
    std::string name, parent;
    int32_t weight = 1;
    int depth = 0;
    Resources deserved{}, allocated{};
    bool has_deserved = false;
    std::map<std::string, int> waiting_by_kind{};
  };
  struct Waiting {
    std::string queue;
    WaitReason reason;
    std::string text;  // WaitReasonText(reason), made once per change
  };
  struct EvictionRow {
    Millis at;
    std::string pod, job, reason;
  };

  std::function<ClusterSnapshot()> snapshot_now_;
  mutable std::mutex mu_;
  std::map<std::string, Waiting> waiting_;  // job key -> why it waits
  std::vector<CycleResult::QueueState> queue_figures_;
  std::vector<QueueRow> queues_;  // tree order: parents before children
  std::deque<EvictionRow> evictions_;  // newest last
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_WAIT_BOARD_H_
