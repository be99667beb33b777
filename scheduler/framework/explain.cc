#include "scheduler/framework/explain.h"

#include <algorithm>
#include <map>

#include "api/quantity.h"
#include "api/strings.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace lahar {
namespace {

std::string Amount(ResourceId r, int64_t amount) { return StrCat(FormatQuantity(amount, ResourceUnit(r)), " ", ResourceName(r)); }

// The resource a reason says is short: its shortage, else the first node refusal "too little X".
std::optional<ResourceId> ShortResource(const WaitReason& reason) {
  if (reason.shortage) return reason.shortage->resource;
  for (const auto& [refusal, nodes] : reason.counts) {
    constexpr std::string_view kTooLittle = "too little ";
    if (refusal.rfind(kTooLittle, 0) != 0) continue;
    const std::string name = refusal.substr(kTooLittle.size());
    for (size_t r = 0; r < ResourceCount(); ++r) {
      if (ResourceName(static_cast<ResourceId>(r)) == name) return static_cast<ResourceId>(r);
    }
  }
  return std::nullopt;
}

// Other leaf queues holding `r` beyond their deserved share: what reclaim could take back.
void AddBorrowers(const ClusterSnapshot& cluster, const std::vector<CycleResult::QueueState>& queues,
                  const JobInfo& job, ResourceId r, std::vector<std::string>& out) {
  std::map<std::string, int> running_jobs;  // per queue name
  for (const JobInfo& other : cluster.jobs) {
    if (other.queue != kNoId && other.allocated.Get(r) > 0) ++running_jobs[cluster.queues[other.queue].name];
  }
  for (const CycleResult::QueueState& q : queues) {
    if (!q.deserved || job.queue == kNoId || q.queue == cluster.queues[job.queue].name) continue;
    const int64_t beyond = q.allocated.Get(r) - q.deserved->Get(r);
    if (beyond <= 0) continue;
    bool reclaimable = true;
    for (const QueueInfo& info : cluster.queues) {
      if (info.name == q.queue) reclaimable = info.reclaimable && info.IsLeaf();
    }
    const int jobs = running_jobs[q.queue];
    out.push_back(StrCat(jobs, jobs == 1 ? " job of queue " : " jobs of queue ", q.queue, " hold ", Amount(r, beyond),
                         " beyond their deserved share and ", reclaimable ? "are reclaimable" : "are not reclaimable"));
  }
}

const TaskInfo* FirstPending(const ClusterSnapshot& cluster, const JobInfo& job) {
  for (TaskId t : job.tasks) {
    if (cluster.tasks[t].status == TaskStatus::kPending) return &cluster.tasks[t];
  }
  return nullptr;
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
      if (std::optional<ResourceId> short_resource = ShortResource(r)) {
        int64_t freest = 0;
        for (const NodeInfo& node : cluster.nodes) {
          if (node.schedulable) freest = std::max(freest, node.Idle().Get(*short_resource));
        }
        const TaskInfo* task = FirstPending(cluster, job);
        const int64_t need = task != nullptr ? task->request.Get(*short_resource) : 0;
        std::string remedy = StrCat("a node that takes its pods frees ", Amount(*short_resource, need), " for one");
        if (freest < need) StrAppend(&remedy, " (the freest node has ", Amount(*short_resource, freest), ")");
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
    if (std::optional<ResourceId> short_resource = ShortResource(r)) AddBorrowers(cluster, queues, job, *short_resource, out);
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
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto str = [&w](std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); };
  w.StartObject();
  w.Key("job");
  str(e.job);
  w.Key("queue");
  str(e.queue);
  w.Key("phase");
  str(e.phase);
  w.Key("min");
  w.Int(e.min);
  w.Key("placed");
  w.Int(e.placed);
  w.Key("pending");
  w.Int(e.pending);
  w.Key("waiting");
  w.Bool(e.waiting);
  if (e.waiting) {
    w.Key("kind");
    str(e.kind);
    w.Key("reason");
    str(e.reason);
    w.Key("conditionReason");
    str(e.condition_reason);
  }
  w.Key("whatWouldLetItStart");
  w.StartArray();
  for (const std::string& remedy : e.remedies) str(remedy);
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
