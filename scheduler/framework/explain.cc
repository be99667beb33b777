#include "scheduler/framework/explain.h"

#include <algorithm>
#include <map>

#include "api/json_writer.h"
#include "api/quantity.h"
#include "api/strings.h"
#include "rapidjson/document.h"

namespace lahar {
namespace {

std::string Amount(ResourceId r, int64_t amount) { return StrCat(FormatQuantity(amount, ResourceUnit(r)), " ", ResourceName(r)); }

// Other leaf queues holding `r` beyond their deserved share: what reclaim could take back.
void AddBorrowers(const ClusterSnapshot& cluster, const std::vector<CycleResult::QueueState>& queues,
                  const JobInfo& job, ResourceId r, std::vector<std::string>& out) {
  if (job.queue == kNoId) return;
  // By name: `queues` come from the session, `cluster` may be a later snapshot.
  std::map<std::string_view, const QueueInfo*> by_name;
  for (const QueueInfo& info : cluster.queues) by_name[info.name] = &info;
  std::vector<int> holding_jobs(cluster.queues.size(), 0);
  for (const JobInfo& other : cluster.jobs) {
    if (other.queue != kNoId && other.allocated.Get(r) > 0) ++holding_jobs[other.queue];
  }
  for (const CycleResult::QueueState& q : queues) {
    auto info = by_name.find(q.queue);
    if (!q.deserved || info == by_name.end() || info->second->id == job.queue) continue;
    const int64_t beyond = q.allocated.Get(r) - q.deserved->Get(r);
    if (beyond <= 0) continue;
    const bool reclaimable = info->second->reclaimable && info->second->IsLeaf();
    const int jobs = holding_jobs[info->second->id];
    out.push_back(StrCat(jobs, jobs == 1 ? " job of queue " : " jobs of queue ", q.queue, " hold ", Amount(r, beyond),
                         " beyond their deserved share and ", reclaimable ? "are reclaimable" : "are not reclaimable"));
  }
}

}  // namespace

JobExplanation ExplainJob(const ClusterSnapshot& cluster, const std::vector<CycleResult::QueueState>& queues,
                          const JobInfo& job, const std::optional<WaitReason>& reason) {
  JobExplanation e;
  e.job = job.key();
  e.queue = job.queue != kNoId ? cluster.queues[job.queue].name : "";
  e.phase = std::string(PodGroupPhaseName(job.phase));
  e.min = job.min_available;
  e.placed = job.PlacedCount();
  e.pending = job.Count(TaskStatus::kPending);
  if (!reason) return e;
  e.waiting = true;
  e.kind = std::string(WaitKindName(reason->kind));
  e.reason = WaitReasonText(*reason);
  e.condition_reason = std::string(ConditionReason(*reason));
  const WaitReason& r = *reason;
  std::vector<std::string>& out = e.remedies;
  switch (r.kind) {
    case WaitKind::kQueueLimit:
      if (r.shortage) {
        const ResourceShortage& s = *r.shortage;
        const int64_t over = s.used + s.need - s.limit;
        if (over > 0) out.push_back(StrCat("queue ", r.subject, "'s jobs free ", Amount(s.resource, over)));
        out.push_back(r.limit == "capability"
                          ? StrCat("queue ", r.subject, "'s capability rises to ", Amount(s.resource, s.used + s.need))
                          : StrCat("queue ", r.subject, "'s deserved share grows (other queues ask for less, or its weight rises)"));
      }
      break;
    case WaitKind::kAdmission:
      if (r.shortage) {
        const ResourceShortage& s = *r.shortage;
        const int64_t lacking = r.factor > 0 ? s.used + s.need - static_cast<int64_t>(static_cast<double>(s.limit) * r.factor)
                                             : s.need - (s.limit - s.used);
        if (lacking > 0) out.push_back(StrCat(Amount(s.resource, lacking), " more comes free in the cluster"));
      }
      break;
    case WaitKind::kNoFit:
      if (r.shortage) {
        const ResourceId resource = r.shortage->resource;
        int64_t freest = 0;
        for (const NodeInfo& node : cluster.nodes) {
          if (node.schedulable) freest = std::max(freest, node.Idle().Get(resource));
        }
        std::string remedy = StrCat("a node that takes its pods frees ", Amount(resource, r.shortage->need), " for one");
        if (freest < r.shortage->need) StrAppend(&remedy, " (the freest node has ", Amount(resource, freest), ")");
        out.push_back(std::move(remedy));
      }
      break;
    case WaitKind::kTopology: out.push_back("a domain of the tier it allows frees the room it needs"); break;
    case WaitKind::kGated: {
      std::string gates;
      for (const std::string& g : r.names) StrAppend(&gates, gates.empty() ? "" : ", ", g);
      out.push_back(StrCat("the scheduling gates are removed from its pods: ", gates));
      break;
    }
    case WaitKind::kWaitingForVictims: out.push_back("the pods being evicted for it finish terminating"); break;
    case WaitKind::kNotLeafQueue: {
      std::string children;
      for (const QueueInfo& q : cluster.queues) {
        if (q.parent != kNoId && cluster.queues[q.parent].name == r.subject) StrAppend(&children, children.empty() ? "" : ", ", q.name);
      }
      out.push_back(StrCat("the job names a leaf queue (children of ", r.subject, ": ", children, ")"));
      break;
    }
    case WaitKind::kQueueClosed: out.push_back(StrCat("queue ", r.subject, " is opened (spec.state: Open)")); break;
    case WaitKind::kInvalid: out.push_back(StrCat("the fault is fixed: ", r.detail)); break;
  }
  if (r.kind == WaitKind::kQueueLimit || r.kind == WaitKind::kAdmission || r.kind == WaitKind::kNoFit) {
    if (r.shortage) AddBorrowers(cluster, queues, job, r.shortage->resource, out);
  }
  return e;
}

std::string FormatExplanation(const JobExplanation& e) {
  std::string out = StrCat("job ", e.job, " (queue ", e.queue.empty() ? "-" : e.queue, "): ", e.phase, ", ", e.placed,
                           " of its min ", e.min, " pods placed, ", e.pending, " pending\n");
  if (!e.waiting) {
    out += "not waiting\n";
    return out;
  }
  StrAppend(&out, "waiting (", e.kind, "): ", e.reason, "\n");
  if (!e.remedies.empty()) {
    out += "it would start once:\n";
    for (const std::string& remedy : e.remedies) StrAppend(&out, "  - ", remedy, "\n");
  }
  return out;
}

std::string ExplanationJson(const JobExplanation& e) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  StringField(w, "job", e.job);
  StringField(w, "queue", e.queue);
  StringField(w, "phase", e.phase);
  IntField(w, "min", e.min);
  IntField(w, "placed", e.placed);
  IntField(w, "pending", e.pending);
  BoolField(w, "waiting", e.waiting);
  if (e.waiting) {
    StringField(w, "kind", e.kind);
    StringField(w, "reason", e.reason);
    StringField(w, "conditionReason", e.condition_reason);
  }
  w.Key("whatWouldLetItStart");
  w.StartArray();
  for (const std::string& remedy : e.remedies) WriteString(w, remedy);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

absl::StatusOr<JobExplanation> ParseExplanationJson(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return absl::InvalidArgumentError("not a JSON object");
  JobExplanation e;
  auto text = [&doc](const char* key, std::string& out) -> absl::Status {
    if (!doc.HasMember(key)) return absl::OkStatus();
    if (!doc[key].IsString()) return absl::InvalidArgumentError(StrCat("\"", key, "\" is not a string"));
    out = doc[key].GetString();
    return absl::OkStatus();
  };
  auto number = [&doc](const char* key, int32_t& out) -> absl::Status {
    if (!doc.HasMember(key)) return absl::OkStatus();
    if (!doc[key].IsInt()) return absl::InvalidArgumentError(StrCat("\"", key, "\" is not an integer"));
    out = doc[key].GetInt();
    return absl::OkStatus();
  };
  if (!doc.HasMember("job")) return absl::InvalidArgumentError("no \"job\" in the explanation");
  for (absl::Status s : {text("job", e.job), text("queue", e.queue), text("phase", e.phase), number("min", e.min),
                         number("placed", e.placed), number("pending", e.pending), text("kind", e.kind),
                         text("reason", e.reason), text("conditionReason", e.condition_reason)}) {
    if (!s.ok()) return s;
  }
  e.waiting = doc.HasMember("waiting") && doc["waiting"].IsBool() && doc["waiting"].GetBool();
  if (doc.HasMember("whatWouldLetItStart") && doc["whatWouldLetItStart"].IsArray()) {
    for (const auto& remedy : doc["whatWouldLetItStart"].GetArray()) {
      if (remedy.IsString()) e.remedies.emplace_back(remedy.GetString());
    }
  }
  return e;
}

}  // namespace lahar
