// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a candidate
// takes the lease when its holder has not renewed it for leaseDuration (measured on the
// candidate's own clock, so clock skew between machines does not matter); the leader renews
// every retryPeriod and gives up leadership when it could not renew for renewDeadline.
#ifndef LAHAR_SCHEDULER_DAEMON_LEADER_ELECTION_H_
#define LAHAR_SCHEDULER_DAEMON_LEADER_ELECTION_H_

#include <atomic>
#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "cache/kube/client.h"

namespace lahar {

struct LeaderElectionConfig {
  std::string namespace_ = "kube-system";
  std::string name = "lahar";
  std::string identity;
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

class LeaderElector {
 public:
  LeaderElector(KubeClient& client, LeaderElectionConfig config);

  // Blocks until this instance holds the lease (true) or `stop` is set (false).
  bool Acquire(const std::atomic<bool>& stop);
  // Renews until `stop` (true: still leading, call Release) or until renewing failed for
  // renewDeadline (false: leadership is lost and the caller must stop acting as leader).
  bool KeepRenewing(const std::atomic<bool>& stop);
  // Hands the lease back so a standby takes over at once instead of after leaseDuration.
  void Release();

  bool leading() const { return leading_.load(); }
  const LeaderElectionConfig& config() const { return config_; }

 private:
  struct Record {
    std::string holder;
    int64_t lease_seconds = 0;
    std::string acquire_time;
    std::string renew_time;
    int64_t transitions = 0;
    std::string resource_version;
  };
  // One attempt; true when we hold the lease afterwards.
  bool TryAcquireOrRenew();
  std::string LeaseBody(const Record& record) const;
  std::string LeasePath() const;

  KubeClient& client_;
  const LeaderElectionConfig config_;
  std::atomic<bool> leading_{false};
  // What we last saw of the lease and when (on our clock): the holder is presumed alive until
  // the record stays unchanged for leaseDuration.
  std::string observed_;
  std::chrono::steady_clock::time_point observed_at_;
  Record last_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_LEADER_ELECTION_H_
