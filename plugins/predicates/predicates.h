// The predicates plugin: whether a node may take a pod at all, apart from resources and pod
// count (Session::ResourceFit checks those for every placement).
//
// In this order: the pod has scheduling gates (kSchedulingGated: it fits no node until every
// gate is removed, as kube-scheduler keeps such pods out of its queue); the node is cordoned
// (kNodeUnschedulable) or not Ready (kNodeNotReady); the pod's nodeSelector does not match the
// node's labels; its required node affinity does not (terms are ORed, the requirements of a term
// ANDed; operators In, NotIn, Exists, DoesNotExist, Gt, Lt with Kubernetes' semantics;
// matchFields know metadata.name); or the node has a NoSchedule / NoExecute taint that no
// toleration of the pod tolerates (PreferNoSchedule is ignored). The detail of an untolerated
// taint reads "key=value" ("key" when the value is empty).
//
// Label and taint results depend only on the pod's constraint class and the node, so they are
// computed once per (class, node) in a session.
#ifndef LAHAR_PLUGINS_PREDICATES_PREDICATES_H_
#define LAHAR_PLUGINS_PREDICATES_PREDICATES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "api/labels.h"
#include "api/objects.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Arguments (Volcano's): predicate.NodeAffinityEnable and predicate.TaintTolerationEnable (bools,
// default true) switch those checks off; Volcano's switches of checks Lahar does not make are
// accepted with a warning.
std::vector<ArgumentSpec> PredicatesArguments();
absl::StatusOr<std::unique_ptr<Plugin>> NewPredicatesPlugin(const Arguments& arguments);

// Required node affinity: true when `terms` is empty or any term matches.
bool MatchesNodeAffinity(const std::vector<NodeSelectorTerm>& terms, const Node& node);
// Kubernetes' Toleration.ToleratesTaint.
bool Tolerates(const Toleration& toleration, const Taint& taint);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_PREDICATES_PREDICATES_H_
