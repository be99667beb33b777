#include "scheduler/daemon/kube_writer.h"

#include <atomic>
#include <chrono>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/json_writer.h"
#include "api/quantity.h"
#include "api/strings.h"

namespace lahar {
namespace {

void Field(JsonWriter& w, std::string_view key, std::string_view value) {
  WriteString(w, key);
  WriteString(w, value);
}

// Opens the object and writes apiVersion, kind and metadata {name, namespace}; the caller adds
// the rest and closes it.
void StartObject(JsonWriter& w, std::string_view api_version, std::string_view kind, std::string_view name,
                 std::string_view namespace_) {
  w.StartObject();
  Field(w, "apiVersion", api_version);
  Field(w, "kind", kind);
  WriteString(w, "metadata");
  w.StartObject();
  Field(w, "name", name);
  Field(w, "namespace", namespace_);
  w.EndObject();
}

std::string PodPath(std::string_view namespace_, std::string_view pod, std::string_view sub) {
  return StrCat("/api/v1/namespaces/", namespace_, "/pods/", pod, "/", sub);
}

}  // namespace

int64_t UnixMicrosNow() { return absl::ToUnixMicros(absl::Now()); }

std::string RfcTime(int64_t unix_micros) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMicros(unix_micros), absl::UTCTimeZone());
}

std::string RfcMicroTime(int64_t unix_micros) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::FromUnixMicros(unix_micros), absl::UTCTimeZone());
}

absl::StatusOr<HttpResult> BindPod(KubeClient& client, std::string_view namespace_, std::string_view pod,
                                   std::string_view node) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  StartObject(w, "v1", "Binding", pod, namespace_);
  WriteString(w, "target");
  w.StartObject();
  Field(w, "apiVersion", "v1");
  Field(w, "kind", "Node");
  Field(w, "name", node);
  w.EndObject();
  w.EndObject();
  return client.Request("POST", PodPath(namespace_, pod, "binding"), body.GetString());
}

absl::StatusOr<HttpResult> EvictPod(KubeClient& client, std::string_view namespace_, std::string_view pod) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  StartObject(w, "policy/v1", "Eviction", pod, namespace_);
  w.EndObject();
  return client.Request("POST", PodPath(namespace_, pod, "eviction"), body.GetString());
}

std::string PodGroupStatusPatch(const PodGroupStatus& status, std::string_view transition_time) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  w.StartObject();
  WriteString(w, "status");
  w.StartObject();
  Field(w, "phase", PodGroupPhaseName(status.phase));
  WriteString(w, "conditions");
  w.StartArray();
  if (!status.condition_type.empty()) {
    w.StartObject();
    Field(w, "type", status.condition_type);
    Field(w, "status", "True");
    Field(w, "reason", status.reason);
    Field(w, "message", status.message);
    Field(w, "lastTransitionTime", transition_time);
    w.EndObject();
  }
  w.EndArray();
  WriteString(w, "running");
  w.Int(status.running);
  WriteString(w, "succeeded");
  w.Int(status.succeeded);
  WriteString(w, "failed");
  w.Int(status.failed);
  w.EndObject();
  w.EndObject();
  return body.GetString();
}

absl::StatusOr<HttpResult> PatchPodGroupStatus(StatusPatcher& patcher, std::string_view namespace_,
                                               std::string_view name, const PodGroupStatus& status,
                                               std::string_view transition_time) {
  return patcher.Patch("podgroups", StrCat(kVolcanoApiPath, "/namespaces/", namespace_, "/podgroups/", name),
                       PodGroupStatusPatch(status, transition_time));
}

absl::StatusOr<HttpResult> PatchPodUnschedulable(KubeClient& client, std::string_view namespace_, std::string_view pod,
                                                 std::string_view reason, std::string_view message,
                                                 std::string_view transition_time) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  w.StartObject();
  WriteString(w, "status");
  w.StartObject();
  WriteString(w, "conditions");
  w.StartArray();
  w.StartObject();
  Field(w, "type", "PodScheduled");
  Field(w, "status", "False");
  Field(w, "reason", reason);
  Field(w, "message", message);
  Field(w, "lastTransitionTime", transition_time);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  // Strategic merge: conditions merge by type, so other conditions stay.
  return client.Request("PATCH", PodPath(namespace_, pod, "status"), body.GetString(),
                        "application/strategic-merge-patch+json");
}

std::string QueueAllocatedPatch(const Resources& allocated, const Resources& previous) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  w.StartObject();
  WriteString(w, "status");
  w.StartObject();
  WriteString(w, "allocated");
  w.StartObject();
  for (const auto& [id, amount] : allocated.NonZero()) Field(w, ResourceName(id), FormatQuantity(amount, ResourceUnit(id)));
  // A merge patch merges maps key by key: a resource no longer allocated is removed with null.
  for (const auto& [id, amount] : previous.NonZero()) {
    if (allocated.Get(id) != 0) continue;
    WriteString(w, ResourceName(id));
    w.Null();
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return body.GetString();
}

absl::StatusOr<HttpResult> PatchQueueAllocated(StatusPatcher& patcher, std::string_view queue,
                                               const Resources& allocated, const Resources& previous) {
  return patcher.Patch("queues", StrCat(kVolcanoApiPath, "/queues/", queue), QueueAllocatedPatch(allocated, previous));
}

absl::StatusOr<HttpResult> CreateEvent(KubeClient& client, const EventSpec& event, std::string_view reporting_instance) {
  static std::atomic<uint64_t> sequence{0};
  const int64_t now = UnixMicrosNow();
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  StartObject(w, "v1", "Event",
              StrCat(event.name, ".", StrFormat("%llx", static_cast<unsigned long long>(now)),
                     StrFormat("%llx", static_cast<unsigned long long>(sequence.fetch_add(1)))),
              event.namespace_);
  WriteString(w, "involvedObject");
  w.StartObject();
  Field(w, "apiVersion", event.api_version);
  Field(w, "kind", event.kind);
  if (!event.object_namespace.empty()) Field(w, "namespace", event.object_namespace);
  Field(w, "name", event.name);
  if (!event.uid.empty()) Field(w, "uid", event.uid);
  w.EndObject();
  Field(w, "type", event.type);
  Field(w, "reason", event.reason);
  Field(w, "message", event.message);
  WriteString(w, "source");
  w.StartObject();
  Field(w, "component", "lahar-scheduler");
  w.EndObject();
  Field(w, "reportingComponent", "lahar-scheduler");
  Field(w, "reportingInstance", reporting_instance);
  Field(w, "firstTimestamp", RfcTime(now));
  Field(w, "lastTimestamp", RfcTime(now));
  WriteString(w, "count");
  w.Int(1);
  w.EndObject();
  return client.Request("POST", StrCat("/api/v1/namespaces/", event.namespace_, "/events"), body.GetString());
}

EventSpec SchedulerEvent(std::string_view pod_namespace, std::string_view pod_name, const LeaderElectionConfig& lease,
                         std::string reason, std::string message) {
  if (!pod_namespace.empty() && !pod_name.empty()) {
    return EventSpec{"Pod", "v1", std::string(pod_namespace), std::string(pod_namespace), std::string(pod_name), "",
                     "Warning", std::move(reason), std::move(message)};
  }
  return EventSpec{"Lease", "coordination.k8s.io/v1", lease.namespace_, lease.namespace_, lease.name, "",
                   "Warning", std::move(reason), std::move(message)};
}

}  // namespace lahar
