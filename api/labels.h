// Kubernetes label and node selector matching, shared by node affinity (predicates) and by
// the objects that select pods (PodDisruptionBudgets).
#ifndef LAHAR_API_LABELS_H_
#define LAHAR_API_LABELS_H_

#include "api/objects.h"

namespace lahar {

// One requirement against labels (or node fields): In, NotIn, Exists, DoesNotExist, and for
// node selectors Gt / Lt on integers. An unknown operator matches nothing, as in Kubernetes.
bool MatchesRequirement(const NodeSelectorRequirement& requirement, const StringMap& values);

// Every pair of `selector` is among `labels` (nodeSelector, matchLabels).
bool MatchesLabels(const StringMap& selector, const StringMap& labels);

// metav1.LabelSelector: matchLabels and every matchExpression.
bool MatchesLabelSelector(const LabelSelector& selector, const StringMap& labels);

}  // namespace lahar

#endif  // LAHAR_API_LABELS_H_
