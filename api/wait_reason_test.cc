// The words of every wait reason kind (spec 7): what every output shows a user.
#include "api/wait_reason.h"

#include <catch2/catch.hpp>

#include "api/resources.h"

namespace lahar {
namespace {

TEST_CASE("wait kinds have the names spec 7 gives them, and parse back") {
  for (int k = 0; k < kWaitKindCount; ++k) {
    const auto kind = static_cast<WaitKind>(k);
    CHECK(ParseWaitKind(WaitKindName(kind)) == kind);
  }
  CHECK(WaitKindName(WaitKind::kWaitingForVictims) == "waiting-for-victims");
  CHECK(WaitKindName(WaitKind::kNotLeafQueue) == "not-leaf-queue");
  CHECK(ParseWaitKind("nofit") == std::nullopt);
}

TEST_CASE("each kind reads as spec 7's examples do") {
  const ResourceId gpu = kNvidiaGpu;
  CHECK(WaitReasonText({.kind = WaitKind::kQueueLimit, .subject = "team-a", .limit = "capability",
                        .shortage = ResourceShortage{gpu, 16, 12, 8}}) ==
        "queue team-a: capability nvidia.com/gpu 16, allocated 12, needs 8");
  CHECK(WaitReasonText({.kind = WaitKind::kQueueLimit, .subject = "a", .limit = "deserved",
                        .shortage = ResourceShortage{kCpu, 2000, 2000, 0}}) ==
        "queue a: deserved cpu 2, allocated 2: at or above it");
  CHECK(WaitReasonText({.kind = WaitKind::kAdmission, .subject = "overcommit", .limit = "minResources",
                        .shortage = ResourceShortage{gpu, 128, 122, 8}, .factor = 1.2}) ==
        "overcommit: admitted minResources nvidia.com/gpu 130 of 128 x 1.2");
  CHECK(WaitReasonText({.kind = WaitKind::kAdmission, .subject = "cluster", .limit = "free",
                        .shortage = ResourceShortage{kMemory, int64_t{4} << 30, 0, int64_t{8} << 30}}) ==
        "cluster: free memory 4Gi, needs 8Gi");
  CHECK(WaitReasonText({.kind = WaitKind::kNoFit, .pods = 3, .of = 8,
                        .counts = {{"too little nvidia.com/gpu", 5}, {"taint dedicated=infra", 2}}}) ==
        "3/8 pods unschedulable: 5 nodes have too little nvidia.com/gpu, 2 have taint dedicated=infra");
  CHECK(WaitReasonText({.kind = WaitKind::kNoFit, .pods = 1, .of = 1, .counts = {{"too little cpu", 1}, {"taint x", 1}}}) ==
        "1/1 pods unschedulable: 1 node has too little cpu, 1 has taint x");
  CHECK(WaitReasonText({.kind = WaitKind::kGated, .pods = 2, .names = {"example.com/quota"}}) ==
        "2 pods have scheduling gates: example.com/quota");
  CHECK(WaitReasonText({.kind = WaitKind::kWaitingForVictims, .pods = 3, .of = 4, .counts = {{"default/low-1", 3}}}) ==
        "3 pods of default/low-1 are terminating for it");
  CHECK(WaitReasonText({.kind = WaitKind::kWaitingForVictims, .pods = 3, .of = 4,
                        .counts = {{"default/a", 1}, {"default/b", 2}, {"default/c", 1}}}) ==
        "1 pod of default/a, 2 of default/b and 1 of default/c are terminating for it");
  CHECK(WaitReasonText({.kind = WaitKind::kWaitingForVictims, .pods = 1, .of = 2}) ==
        "1/2 pods wait for resources being released");
  CHECK(WaitReasonText({.kind = WaitKind::kQueueClosed, .subject = "q"}) == "queue q is closed");
  CHECK(WaitReasonText({.kind = WaitKind::kNotLeafQueue, .subject = "dept"}) ==
        "queue dept has child queues; jobs are scheduled in leaf queues only");
}

TEST_CASE("the PodGroup condition reason is the one Volcano's users know") {
  CHECK(ConditionReason({.kind = WaitKind::kNoFit}) == "NotEnoughResources");
  CHECK(ConditionReason({.kind = WaitKind::kGated}) == "SchedulingGated");
  CHECK(ConditionReason({.kind = WaitKind::kInvalid}) == "Invalid");
  CHECK(ConditionReason({.kind = WaitKind::kInvalid, .subject = "QueueNotFound"}) == "QueueNotFound");
  CHECK(ConditionReason({.kind = WaitKind::kQueueClosed, .subject = "q"}) == "QueueClosed");
}

}  // namespace
}  // namespace lahar
