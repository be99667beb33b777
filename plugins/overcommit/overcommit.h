// The overcommit plugin (Volcano's): enqueue admits jobs while the minResources of all admitted
// jobs stay within the cluster's allocatable times `overcommit-factor` (default 1.2), so that a
// few more gangs than fit wait admitted, their pods created, ready for the capacity that frees.
//
// It takes over the cluster-wide admission check of `enqueue` (Session::AddClusterAdmissionFn):
// where enqueue alone admits only what is free now (plus what evicting actions could take),
// with overcommit the bound is allocatable x factor, as in Volcano:
//   used + lacking + need <= allocatable x factor, for every resource `need` names,
// where `used` is what the pods on the nodes request (every scheduler's), `lacking` what the
// admitted jobs (Inqueue, Running; those admitted earlier in the session too) still lack of
// their min, and `need` what admitting the job asks (job_rules.h, AdmissionRequest). A job
// whose PodGroup has no minResources is not held back (Volcano does not count it either).
// A refusal is the job's reason:
//   "overcommit: admitted minResources nvidia.com/gpu 14 of 10 x 1.2".
// Volcano replaces a factor below 1 by the default; Lahar takes it as written (a factor of 0.8
// keeps a fifth of the cluster out of admission), since a user who writes it means it.
#ifndef LAHAR_PLUGINS_OVERCOMMIT_OVERCOMMIT_H_
#define LAHAR_PLUGINS_OVERCOMMIT_OVERCOMMIT_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

std::vector<ArgumentSpec> OvercommitArguments();
absl::StatusOr<std::unique_ptr<Plugin>> NewOvercommitPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_OVERCOMMIT_OVERCOMMIT_H_
