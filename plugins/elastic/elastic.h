// The `elastic` plugin: Lahar's policy for elastic workers (spec sections 2 and 3). It only
// registers hooks; the actions `elastic-scale` and `preempt-elastic-workers` act on them.
//
// Arguments:
//   elastic.cooldown     Go duration, default 60s. Per-job override: PodGroup annotation
//                        lahar.sh/elastic-cooldown (JobInfo::cooldown_override).
//   elastic.cpuByLimits  bool, default true.
//   elastic.minGain      number >= 0, default 0.1: an elastic worker is added only while its
//                        expected gain is at least this (spec 3.2).
//   elastic.goodput      bool, default true; false ignores lahar.sh/throughput (every job is
//                        ordered by fulfillment), e.g. to compare the two with lahar-sim.
// A malformed value is InvalidArgument naming the plugin and the key.
//
// Hooks (see scheduler/framework/job_rules.h for min, max, master and fulfillment):
// - Goodput (spec 3.2, plugins/elastic/goodput.h): a measured job (JobInfo::measured) with
//   reported points has an expected gain for its next worker and for its last one, from the
//   curve fitted to its points (for the last, the reported points themselves when both sizes
//   were reported); a job without reports is expected to gain 1.0 either way. Gains compare per
//   unit of the job's dominant resource (see PerUnit). ElasticOrder puts the higher next gain
//   first, ElasticVictimOrder takes the lower last gain first (registered only when some job of
//   the session is measured, so sessions without reports order exactly as before). ElasticGrow
//   refuses a worker whose expected gain is below elastic.minGain, and a measured job one past
//   its largest reported size (none reported: no growth) or past a size its reports showed not
//   to pay (UsefulSizeLimit); ElasticShed asks for the workers above that size back.
// - ElasticOrder: then the less fulfilled job first. Equal scores: more nvidia.com/gpu per pod first,
//   then more cpu, then more memory, where "per pod" is the request of the job's next pending
//   task in task order (for a job with nothing pending: its last task in task order, the one it
//   would give up first). Still equal: the session falls back to its job order.
// - Scalable (the cooldown): a job is scalable when it has never been scaled
//   (last_scale_time == kNeverMillis: a job's start is not a change) or when
//   now - last_scale_time >= its cooldown (the override when set, else elastic.cooldown).
//   Session::MarkScaled sets last_scale_time = now, so a job scaled in this session is not
//   scalable again in it (callers that keep growing a job within one scale-up decide that before
//   marking it).
// - ElasticPredicate (only with elastic.cpuByLimits): a task that requests no extended resource
//   (no resource name with a '/', such as nvidia.com/gpu) fits a node only when the limits of
//   every pod on it plus the task's limits stay within allocatable, for cpu and for memory, so
//   CPU-only extras never oversubscribe what pods may really use. Tasks with an extended
//   resource are unaffected. Only elastic workers are checked: allocate never calls the elastic
//   predicate, so every job's min is placed by requests.
// - JobEnqueueable: permits a job whose minResources fit what would be free if every elastic
//   worker (on a schedulable node) were taken back, both in the cluster and in the job's queue:
//     cluster: min <= idle of schedulable nodes + elastic workers' requests
//                     - what admitted jobs (Inqueue / Running) still lack of their min;
//     queue:   min + sum over the queue's other jobs of max(allocated - elastic workers,
//                                                          minResources if admitted)
//              <= the queue's real capability, as proportion computes it: its capability
//                 within the cluster minus the other queues' guarantees (each resource the
//                 job requests).
//   Otherwise it abstains: it never rejects, so it only ever lets elastic workers count as free.
//   Interplay with `proportion`: votes are combined per tier (a reject ends a tier, a tier with a
//   permit decides). In the default configuration elastic sits in the first tier and proportion
//   in the second, so elastic's permit decides for the jobs it permits and proportion's
//   enqueue check (which does not count elastic workers as free) is consulted only for the jobs
//   elastic abstains on. That is why the permit repeats proportion's capability check, counting
//   elastic workers as free as Volcano's proportion does (allocated + inqueue - elastic),
//   instead of trusting a later tier to make it. Were both in one tier, proportion's reject would
//   win. Proportion learns of admissions only through its own votes, so within the session that
//   admits a job on elastic's permit, proportion's queue totals miss that job's min (from the
//   next session on, the job is Inqueue and counted).
//   The `enqueue` action checks the cluster's headroom itself before asking the hooks; for a job
//   that needs elastic workers back, that headroom must include ElasticWorkerRequests(session)
//   (scheduler/framework/job_rules.h), or the permit is never asked for.
#ifndef LAHAR_PLUGINS_ELASTIC_ELASTIC_H_
#define LAHAR_PLUGINS_ELASTIC_ELASTIC_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "api/duration.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

struct ElasticPluginOptions {
  Millis cooldown = 60 * 1000;
  bool cpu_by_limits = true;
  double min_gain = 0.1;
  bool goodput = true;
};

std::vector<ArgumentSpec> ElasticArguments();
absl::StatusOr<ElasticPluginOptions> ParseElasticPluginOptions(const Arguments& arguments);

// Validates `arguments` and creates the plugin.
absl::StatusOr<std::unique_ptr<Plugin>> NewElasticPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_ELASTIC_ELASTIC_H_
