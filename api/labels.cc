#include "api/labels.h"

#include <algorithm>

#include "absl/strings/numbers.h"

namespace lahar {

bool MatchesRequirement(const NodeSelectorRequirement& requirement, const StringMap& values) {
  auto it = values.find(requirement.key);
  const bool present = it != values.end();
  const auto& allowed = requirement.values;
  const std::string& op = requirement.operator_;
  if (op == "In") {
    return present && std::find(allowed.begin(), allowed.end(), it->second) != allowed.end();
  }
  if (op == "NotIn") {
    return !present || std::find(allowed.begin(), allowed.end(), it->second) == allowed.end();
  }
  if (op == "Exists") return present;
  if (op == "DoesNotExist") return !present;
  if (op == "Gt" || op == "Lt") {
    // Both sides must be integers, with exactly one value; anything else matches nothing.
    int64_t have;
    int64_t bound;
    if (!present || allowed.size() != 1 || !absl::SimpleAtoi(it->second, &have) ||
        !absl::SimpleAtoi(allowed[0], &bound)) {
      return false;
    }
    return op == "Gt" ? have > bound : have < bound;
  }
  return false;
}

bool MatchesLabels(const StringMap& selector, const StringMap& labels) {
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

bool MatchesLabelSelector(const LabelSelector& selector, const StringMap& labels) {
  if (!MatchesLabels(selector.match_labels, labels)) return false;
  return std::all_of(selector.match_expressions.begin(), selector.match_expressions.end(),
                     [&](const NodeSelectorRequirement& r) { return MatchesRequirement(r, labels); });
}

}  // namespace lahar
