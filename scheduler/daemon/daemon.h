// lahar-scheduler: keeps a ClusterCache in step with the apiserver (reflectors), runs a
// scheduling cycle every period while it leads, and writes the outcome back: bindings,
// evictions, PodGroup and Queue status, pod conditions and Events.
#ifndef LAHAR_SCHEDULER_DAEMON_DAEMON_H_
#define LAHAR_SCHEDULER_DAEMON_DAEMON_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/kube/kubeconfig.h"
#include "scheduler/daemon/leader_election.h"

namespace lahar {

struct DaemonOptions {
  ClientConfig client;
  std::set<std::string, std::less<>> scheduler_names = {"lahar"};
  std::string scheduler_conf;  // empty: the default configuration
  std::chrono::milliseconds schedule_period{1000};
  std::chrono::milliseconds config_poll_period{1000};
  std::string default_queue = "default";
  bool leader_elect = true;
  LeaderElectionConfig leader;
  std::string listen_address = ":8080";
  int bind_workers = 16;
  int status_workers = 4;
};

class SchedulerDaemon {
 public:
  // Checks the options, loads the configuration file (a bad one is an error here: there is
  // no last good configuration yet) and binds the HTTP listener.
  static absl::StatusOr<std::unique_ptr<SchedulerDaemon>> Create(DaemonOptions options);
  ~SchedulerDaemon();

  // Runs until `stop` is set (OK) or leadership is lost (an error: the process should exit so
  // that it restarts as a standby with a fresh cache, as client-go schedulers do).
  absl::Status Run(const std::atomic<bool>& stop);

  int http_port() const;

  class Impl;

 private:
  explicit SchedulerDaemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_DAEMON_H_
