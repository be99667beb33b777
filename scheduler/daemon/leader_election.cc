#include "scheduler/daemon/leader_election.h"

#include <thread>

#include "api/interruptible_sleep.h"
#include "api/log.h"
#include "api/strings.h"
#include "cache/kube/json_fields.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/daemon/kube_writer.h"

namespace lahar {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

LeaderElector::LeaderElector(KubeClient& client, LeaderElectionConfig config)
    : client_(client), config_(std::move(config)) {}

std::string LeaderElector::LeasePath() const {
  return StrCat("/apis/coordination.k8s.io/v1/namespaces/", config_.namespace_, "/leases/", config_.name);
}

std::string LeaderElector::LeaseBody(const Record& record) const {
  rapidjson::StringBuffer body;
  rapidjson::Writer<rapidjson::StringBuffer> w(body);
  w.StartObject();
  w.Key("apiVersion");
  w.String("coordination.k8s.io/v1");
  w.Key("kind");
  w.String("Lease");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(config_.name.c_str());
  w.Key("namespace");
  w.String(config_.namespace_.c_str());
  if (!record.resource_version.empty()) {
    w.Key("resourceVersion");
    w.String(record.resource_version.c_str());
  }
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("holderIdentity");
  w.String(record.holder.c_str());
  w.Key("leaseDurationSeconds");
  w.Int64(record.lease_seconds);
  w.Key("acquireTime");
  w.String(record.acquire_time.c_str());
  w.Key("renewTime");
  w.String(record.renew_time.c_str());
  w.Key("leaseTransitions");
  w.Int64(record.transitions);
  w.EndObject();
  w.EndObject();
  return body.GetString();
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string now = RfcMicroTime(UnixMicrosNow());
  const int64_t lease_seconds =
      std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  absl::StatusOr<HttpResult> got = client_.Request("GET", LeasePath());
  if (!got.ok()) {
    LAHAR_WARN("leader") << "reading lease " << config_.namespace_ << "/" << config_.name << ": " << got.status().message();
    return false;
  }
  if (got->status == 404) {
    Record record{config_.identity, lease_seconds, now, now, 0, ""};
    absl::StatusOr<HttpResult> created =
        client_.Request("POST", StrCat("/apis/coordination.k8s.io/v1/namespaces/", config_.namespace_, "/leases"),
                        LeaseBody(record));
    if (created.ok() && created->ok()) return true;
    LAHAR_WARN("leader") << "creating lease: " << (created.ok() ? created->Describe() : std::string(created.status().message()));
    return false;
  }
  if (!got->ok()) {
    LAHAR_WARN("leader") << "reading lease: " << got->Describe();
    return false;
  }
  rapidjson::Document lease;
  lease.Parse(got->body.data(), got->body.size());
  if (lease.HasParseError() || !lease.IsObject()) return false;
  const rapidjson::Value& spec = ObjectField(lease, "spec");
  Record current{StringField(spec, "holderIdentity"), IntField(spec, "leaseDurationSeconds"),
                 StringField(spec, "acquireTime"),    StringField(spec, "renewTime"),
                 IntField(spec, "leaseTransitions"),  MetadataField(lease, "resourceVersion")};
  std::string observed = StrCat(current.holder, "|", current.renew_time, "|", current.resource_version);
  if (observed != observed_) {
    observed_ = observed;
    observed_at_ = Clock::now();
  }
  const bool ours = current.holder == config_.identity;
  const auto held_for = std::chrono::seconds(current.lease_seconds > 0 ? current.lease_seconds : lease_seconds);
  if (!ours && !current.holder.empty() && Clock::now() < observed_at_ + held_for) return false;

  Record next = current;
  next.holder = config_.identity;
  next.lease_seconds = lease_seconds;
  next.renew_time = now;
  if (!ours) {
    next.acquire_time = now;
    next.transitions = current.transitions + 1;
  }
  absl::StatusOr<HttpResult> updated = client_.Request("PUT", LeasePath(), LeaseBody(next));
  if (updated.ok() && updated->ok()) return true;
  if (updated.ok() && updated->status != 409) LAHAR_WARN("leader") << "updating lease: " << updated->Describe();
  return false;
}

bool LeaderElector::Acquire(const std::atomic<bool>& stop) {
  LAHAR_LOG(0, "leader") << "identity=" << config_.identity << " waiting for lease " << config_.namespace_ << "/"
                         << config_.name;
  while (!stop.load()) {
    if (TryAcquireOrRenew()) {
      leading_.store(true);
      LAHAR_WARN("leader") << "identity=" << config_.identity << " became leader (lease " << config_.namespace_ << "/"
                           << config_.name << ")";
      return true;
    }
    SleepUnlessStopped(config_.retry_period, stop);
  }
  return false;
}

bool LeaderElector::KeepRenewing(const std::atomic<bool>& stop) {
  auto last_renew = Clock::now();
  while (!stop.load()) {
    SleepUnlessStopped(config_.retry_period, stop);
    if (stop.load()) break;
    if (TryAcquireOrRenew()) {
      last_renew = Clock::now();
    } else if (Clock::now() - last_renew > config_.renew_deadline) {
      leading_.store(false);
      LAHAR_ERROR("leader") << "identity=" << config_.identity << " lost the lease: not renewed within "
                            << config_.renew_deadline.count() << "ms";
      return false;
    }
  }
  return true;
}

void LeaderElector::Release() {
  if (!leading_.exchange(false)) return;
  absl::StatusOr<HttpResult> got = client_.Request("GET", LeasePath());
  if (!got.ok() || !got->ok()) return;
  rapidjson::Document lease;
  lease.Parse(got->body.data(), got->body.size());
  if (lease.HasParseError() || !lease.IsObject()) return;
  const rapidjson::Value& spec = ObjectField(lease, "spec");
  if (StringField(spec, "holderIdentity") != config_.identity) return;
  const std::string now = RfcMicroTime(UnixMicrosNow());
  Record released{"", 1, now, now, IntField(spec, "leaseTransitions"), MetadataField(lease, "resourceVersion")};
  absl::StatusOr<HttpResult> result = client_.Request("PUT", LeasePath(), LeaseBody(released));
  if (result.ok() && result->ok()) LAHAR_LOG(0, "leader") << "released the lease";
}

}  // namespace lahar
