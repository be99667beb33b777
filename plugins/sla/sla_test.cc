// Tests of the sla plugin: a job past its waiting time limit is admitted and served first.
#include "plugins/sla/sla.h"

#include <limits>

#include <catch2/catch.hpp>

#include "scheduler/framework/config.h"
#include "scheduler/framework/wait_memo.h"
#include "scheduler/framework/session.h"
#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

constexpr Millis kHour = 3'600'000;
constexpr PodGroupPhase kPending = PodGroupPhase::kPending;

// The default configuration's enqueue and allocate, with sla first in the first tier, so that
// its permit decides admission before proportion's limits (Volcano's tiers).
std::string Config(std::map<std::string, std::string, std::less<>> sla_arguments = {}) {
  SchedulerConfig config = testing::MustParseConfig(DefaultSchedulerConfigYaml());
  config.actions = {"enqueue", "allocate"};
  PluginOption sla;
  sla.name = "sla";
  sla.arguments = Arguments("plugin sla", std::move(sla_arguments));
  config.tiers[0].plugins.insert(config.tiers[0].plugins.begin(), std::move(sla));
  return config.ToYaml();
}

void Annotate(ClusterBuilder& b, const std::string& job_key, const std::string& key, const std::string& value) {
  PodGroup group = *b.cache().FindPodGroup(job_key);
  group.meta.annotations[key] = value;
  b.cache().UpsertPodGroup(std::move(group));
}

PodGroupPhase PhaseOf(const SessionOutcome& out, const std::string& job) {
  auto it = out.job_updates.find(job);
  return it == out.job_updates.end() ? kPending : it->second.phase;
}

// Queue q may hold 2 cpu and holds them already; `late` (created at 0) waits for room.
ClusterBuilder FullQueue() {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Queue("q", 1, "cpu=2");
  b.Job("first", {.queue = "q", .tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("first-w-0", "n1");
  b.Job("late", {.queue = "q", .tasks = {{"w", 1, "cpu=2"}}, .phase = kPending});
  return b;
}

TEST_CASE("sla: a job past sla-waiting-time is admitted where the queue's limits would hold it") {
  ClusterBuilder b = FullQueue();
  const std::string config = Config({{"sla-waiting-time", "1h"}});
  CHECK(PhaseOf(RunSession(b, config, /*now=*/kHour - 1), "default/late") == kPending);
  CHECK(PhaseOf(RunSession(b, config, /*now=*/kHour), "default/late") == PodGroupPhase::kInqueue);
  // Without a limit it waits.
  CHECK(PhaseOf(RunSession(b, Config(), /*now=*/100 * kHour), "default/late") == kPending);
}

TEST_CASE("sla: the PodGroup annotation sets a job's own limit, overriding the argument") {
  ClusterBuilder b = FullQueue();
  Annotate(b, "default/late", "sla-waiting-time", "10m");
  CHECK(PhaseOf(RunSession(b, Config(), /*now=*/kHour / 6), "default/late") == PodGroupPhase::kInqueue);
  CHECK(PhaseOf(RunSession(b, Config({{"sla-waiting-time", "5h"}}), kHour / 6), "default/late") ==
        PodGroupPhase::kInqueue);
  // Volcano's job controller's annotation wins over the plain one.
  Annotate(b, "default/late", "volcano.sh/sla-waiting-time", "5h");
  CHECK(PhaseOf(RunSession(b, Config(), kHour / 6), "default/late") == kPending);
  CHECK(PhaseOf(RunSession(b, Config(), 6 * kHour), "default/late") == PodGroupPhase::kInqueue);
  Annotate(b, "default/late", "volcano.sh/sla-waiting-time", "soon");  // not a duration: no limit
  Annotate(b, "default/late", "sla-waiting-time", "soon");
  CHECK(PhaseOf(RunSession(b, Config(), 100 * kHour), "default/late") == kPending);
}

TEST_CASE("sla: an overdue job is served before younger ones of its queue, earliest deadline first") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2");
  // Room for one; without an overdue job, the first created (a, by name on a tie) goes first.
  b.Job("a", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Job("b", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Job("c", {.tasks = {{"w", 1, "cpu=2"}}});
  CHECK(RunSession(b, Config(), kHour).binds.count("default/a-w-0") == 1);
  Annotate(b, "default/b", "sla-waiting-time", "50m");
  Annotate(b, "default/c", "sla-waiting-time", "40m");
  SessionOutcome out = RunSession(b, Config(), kHour);
  CHECK(out.binds.size() == 1);
  CHECK(out.binds.count("default/c-w-0") == 1);  // both overdue: c's deadline (40m) is earlier
  // Neither overdue yet: the other plugins decide.
  CHECK(RunSession(b, Config(), kHour / 2).binds.count("default/a-w-0") == 1);
}

TEST_CASE("sla: an overdue job is admitted though a job alike in all else was just refused") {
  // With the sessions' memory, enqueue judges a job by an alike job's refusal: not one whose
  // deadline makes sla judge it by its age. Job order left to the others: `late` comes first.
  ClusterBuilder b = FullQueue();
  b.Job("later", {.queue = "q", .tasks = {{"w", 1, "cpu=2"}}, .phase = kPending});
  Annotate(b, "default/later", "sla-waiting-time", "10m");
  SchedulerConfig config = testing::MustParseConfig(Config());
  config.tiers[0].plugins[0].enabled[static_cast<size_t>(ExtensionPoint::kJobOrder)] = false;
  WaitMemo memo;
  SessionOutcome out = RunSession(b, config.ToYaml(), kHour, &memo);
  CHECK(PhaseOf(out, "default/late") == kPending);
  CHECK(out.job_updates.at("default/late").message() == "queue q: capability cpu 2, allocated 2, needs 2");
  CHECK(PhaseOf(out, "default/later") == PodGroupPhase::kInqueue);
}

TEST_CASE("sla: a session knows when the next deadline passes, so remembered waits end then") {
  ClusterBuilder b = FullQueue();  // `late` created at 0
  SchedulerConfig config = testing::MustParseConfig(Config({{"sla-waiting-time", "1h"}}));
  auto before = Session::Open(b.Snapshot(kHour / 2), config, BuiltinRegistry());
  REQUIRE(before.ok());
  CHECK((*before)->expiry() == kHour);
  auto after = Session::Open(b.Snapshot(2 * kHour), config, BuiltinRegistry());
  REQUIRE(after.ok());
  CHECK((*after)->expiry() == std::numeric_limits<Millis>::max());  // every deadline has passed
}

TEST_CASE("sla: arguments are checked") {
  CHECK(NewSlaPlugin(Arguments("plugin sla", {{"sla-waiting-time", "1h"}})).ok());
  CHECK(NewSlaPlugin(Arguments("plugin sla", {})).ok());
  const auto unknown = BuiltinRegistry().NewPlugin("sla", Arguments("plugin sla", {{"sla-waitingtime", "1h"}}));
  REQUIRE_FALSE(unknown.ok());
  CHECK(std::string(unknown.status().message()) ==
        "plugin sla: unknown argument \"sla-waitingtime\" (valid arguments: sla-waiting-time)");
  CHECK_FALSE(NewSlaPlugin(Arguments("plugin sla", {{"sla-waiting-time", "an hour"}})).ok());
  CHECK_FALSE(NewSlaPlugin(Arguments("plugin sla", {{"sla-waiting-time", "0s"}})).ok());
}

}  // namespace
}  // namespace lahar
