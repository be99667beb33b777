#include "api/wait_reason.h"

#include "api/quantity.h"
#include "api/strings.h"

namespace lahar {
namespace {

constexpr std::string_view kKindNames[kWaitKindCount] = {
    "queue-limit", "admission", "no-fit", "topology", "gated", "waiting-for-victims",
    "not-leaf-queue", "queue-closed", "invalid",
};

std::string Amount(ResourceId resource, int64_t amount) { return FormatQuantity(amount, ResourceUnit(resource)); }

std::string Plural(int32_t n, std::string_view one, std::string_view many) {
  return StrCat(n, " ", n == 1 ? one : many);
}

std::string QueueLimitText(const WaitReason& r) {
  if (!r.shortage) return StrCat("queue ", r.subject, ": would pass its ", r.limit);
  const ResourceShortage& s = *r.shortage;
  std::string out = StrCat("queue ", r.subject, ": ", r.limit, " ", ResourceName(s.resource), " ",
                           Amount(s.resource, s.limit), ", allocated ", Amount(s.resource, s.used));
  if (s.need > 0) {
    StrAppend(&out, ", needs ", Amount(s.resource, s.need));
  } else {
    out += ": at or above it";
  }
  return out;
}

std::string AdmissionText(const WaitReason& r) {
  if (!r.shortage) return StrCat(r.subject, ": ", r.detail);
  const ResourceShortage& s = *r.shortage;
  const std::string name = ResourceName(s.resource);
  if (r.factor > 0) {
    return StrCat(r.subject, ": admitted ", r.limit, " ", name, " ", Amount(s.resource, s.used + s.need), " of ",
                  Amount(s.resource, s.limit), " x ", r.factor);
  }
  return StrCat(r.subject, ": ", r.limit, " ", name, " ", Amount(s.resource, s.limit - s.used), ", needs ",
                Amount(s.resource, s.need));
}

std::string NoFitText(const WaitReason& r) {
  std::string out = StrCat(r.pods, "/", r.of, " pods unschedulable: ");
  if (r.counts.empty()) return out + r.detail;
  bool first = true;
  for (const auto& [refusal, nodes] : r.counts) {
    if (!first) out += ", ";
    StrAppend(&out, first ? Plural(nodes, "node has ", "nodes have ") : Plural(nodes, "has ", "have "), refusal);
    first = false;
  }
  return out;
}

std::string VictimsText(const WaitReason& r) {
  if (r.counts.empty()) return StrCat(r.pods, "/", r.of, " pods wait for resources being released");
  std::string out;
  int32_t total = 0;
  for (size_t i = 0; i < r.counts.size(); ++i) {
    const auto& [job, pods] = r.counts[i];
    if (i > 0) out += i + 1 == r.counts.size() ? " and " : ", ";
    StrAppend(&out, i == 0 ? Plural(pods, "pod", "pods") : std::to_string(pods), " of ", job);
    total += pods;
  }
  StrAppend(&out, total == 1 ? " is" : " are", " terminating for it");
  return out;
}

}  // namespace

std::string_view WaitKindName(WaitKind kind) { return kKindNames[static_cast<int>(kind)]; }

std::optional<WaitKind> ParseWaitKind(std::string_view name) {
  for (int k = 0; k < kWaitKindCount; ++k) {
    if (kKindNames[k] == name) return static_cast<WaitKind>(k);
  }
  return std::nullopt;
}

std::string WaitReasonText(const WaitReason& r) {
  switch (r.kind) {
    case WaitKind::kQueueLimit: return QueueLimitText(r);
    case WaitKind::kAdmission: return AdmissionText(r);
    case WaitKind::kNoFit: return NoFitText(r);
    case WaitKind::kTopology: return r.detail;
    case WaitKind::kGated: {
      std::string out = StrCat(r.pods, r.pods == 1 ? " pod has" : " pods have", " scheduling gates: ");
      for (size_t i = 0; i < r.names.size(); ++i) StrAppend(&out, i > 0 ? ", " : "", r.names[i]);
      return out;
    }
    case WaitKind::kWaitingForVictims: return VictimsText(r);
    case WaitKind::kNotLeafQueue:
      return StrCat("queue ", r.subject, " has child queues; jobs are scheduled in leaf queues only");
    case WaitKind::kQueueClosed: return StrCat("queue ", r.subject, " is closed");
    case WaitKind::kInvalid: return r.detail;
  }
  return r.detail;
}

std::string_view ConditionReason(const WaitReason& r) {
  switch (r.kind) {
    case WaitKind::kQueueLimit:
    case WaitKind::kAdmission:
    case WaitKind::kNoFit:
    case WaitKind::kTopology: return "NotEnoughResources";
    case WaitKind::kGated: return "SchedulingGated";
    case WaitKind::kWaitingForVictims: return "Pipelined";
    case WaitKind::kNotLeafQueue: return "QueueUnusable";
    case WaitKind::kQueueClosed: return "QueueClosed";
    case WaitKind::kInvalid: return r.subject.empty() ? std::string_view("Invalid") : std::string_view(r.subject);
  }
  return "Unschedulable";
}

}  // namespace lahar
