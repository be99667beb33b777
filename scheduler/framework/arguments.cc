#include "scheduler/framework/arguments.h"

#include <climits>
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar {

absl::Status Arguments::ErrorAtKey(std::string_view key, std::string_view message) const {
  auto source = sources_.find(key);
  const std::string where =
      source == sources_.end() || source->second.line == 0 ? "" : StrCat("line ", source->second.line, ": ");
  return absl::InvalidArgumentError(StrCat(where, message));
}

absl::Status Arguments::Error(std::string_view key, std::string_view what) const {
  return ErrorAtKey(key, StrCat(owner_, ": argument ", key, ": ", what));
}

absl::StatusOr<std::string> Arguments::GetString(std::string_view key,
                                                 std::string default_value) const {
  auto it = values_.find(key);
  return it == values_.end() ? default_value : it->second;
}

absl::StatusOr<int64_t> Arguments::GetInt(std::string_view key, int64_t default_value,
                                          int64_t min, int64_t max) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  int64_t value;
  if (!absl::SimpleAtoi(it->second, &value)) {
    return Error(key, StrCat("\"", it->second, "\" is not an integer"));
  }
  if (value < min || value > max) {
    return Error(key, StrCat(value, " is outside [", min, ", ", max, "]"));
  }
  return value;
}

absl::StatusOr<double> Arguments::GetDouble(std::string_view key, double default_value,
                                            double min, double max) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  double value;
  if (!absl::SimpleAtod(it->second, &value) || value != value) {
    return Error(key, StrCat("\"", it->second, "\" is not a number"));
  }
  if (value < min || value > max) {
    return Error(key, StrCat(value, " is outside [", min, ", ", max, "]"));
  }
  return value;
}

absl::StatusOr<bool> Arguments::GetBool(std::string_view key, bool default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  if (std::optional<bool> value = ParseBoolWord(it->second)) return *value;
  return Error(key, StrCat("\"", it->second, "\" is not true or false"));
}

absl::StatusOr<Millis> Arguments::GetDuration(std::string_view key, Millis default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  auto value = ParseDuration(it->second);
  if (!value.ok()) return Error(key, FromAbsl(value.status().message()));
  return *value;
}

std::optional<bool> ParseBoolWord(std::string_view text) {
  static constexpr std::string_view kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On",
                                               "ON",   "y",    "Y",    "1",   "t",   "T"};
  static constexpr std::string_view kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off",
                                                "OFF",   "n",     "N",     "0",  "f",  "F"};
  for (std::string_view word : kTrue) {
    if (text == word) return true;
  }
  for (std::string_view word : kFalse) {
    if (text == word) return false;
  }
  return std::nullopt;
}

bool Arguments::IsStructured(std::string_view key) const {
  auto source = sources_.find(key);
  return source != sources_.end() && source->second.structured;
}

bool ArgumentSpec::Matches(std::string_view candidate) const {
  if (!key.empty() && key.back() == '*') {
    const std::string_view prefix = key.substr(0, key.size() - 1);
    return candidate.size() > prefix.size() && candidate.substr(0, prefix.size()) == prefix;
  }
  return candidate == key;
}

std::string_view ArgumentKindName(ArgumentKind kind) {
  switch (kind) {
    case ArgumentKind::kInt: return "integer";
    case ArgumentKind::kNumber: return "number";
    case ArgumentKind::kBool: return "bool";
    case ArgumentKind::kDuration: return "duration";
    case ArgumentKind::kString: return "string";
    case ArgumentKind::kStructured: return "list or map";
  }
  return "?";
}

absl::StatusOr<std::vector<std::string>> CheckArguments(const Arguments& arguments,
                                                        absl::Span<const ArgumentSpec> specs) {
  std::vector<std::string> warnings;
  for (const auto& [key, value] : arguments.values()) {
    const ArgumentSpec* spec = nullptr;
    for (const ArgumentSpec& candidate : specs) {
      if (candidate.Matches(key)) {
        spec = &candidate;
        break;
      }
    }
    if (spec == nullptr) {
      std::string valid;
      for (const ArgumentSpec& s : specs) StrAppend(&valid, valid.empty() ? "" : ", ", s.key);
      return arguments.ErrorAtKey(key, StrCat(arguments.owner(), ": unknown argument \"", key, "\" (",
                                              specs.empty() ? "it takes no arguments" : StrCat("valid arguments: ", valid), ")"));
    }
    // The kind only: ranges are the factory's, which knows what the value means.
    if (arguments.IsStructured(key) != (spec->kind == ArgumentKind::kStructured)) {
      return arguments.Error(key, StrCat("expected a ", ArgumentKindName(spec->kind)));
    }
    switch (spec->kind) {
      case ArgumentKind::kInt:
        RETURN_IF_ERROR(arguments.GetInt(key, 0, INT64_MIN, INT64_MAX).status());
        break;
      case ArgumentKind::kNumber:
        RETURN_IF_ERROR(arguments.GetDouble(key, 0, -HUGE_VAL, HUGE_VAL).status());
        break;
      case ArgumentKind::kBool:
        RETURN_IF_ERROR(arguments.GetBool(key, false).status());
        break;
      case ArgumentKind::kDuration:
        RETURN_IF_ERROR(arguments.GetDuration(key, 0).status());
        break;
      case ArgumentKind::kString:
      case ArgumentKind::kStructured:
        break;
    }
    if (spec->support == ArgumentSupport::kIgnored) {
      warnings.push_back(StrCat(arguments.owner(), ": argument ", key,
                                " is accepted as Volcano defines it but Lahar does not act on it"));
    }
  }
  return warnings;
}

std::vector<ArgumentSpec> NodeSearchArgumentSpecs() {
  return {
    {"minNodesToFind", ArgumentKind::kInt, "100", ArgumentSupport::kHonoured,
     "fewest feasible nodes scored per task"},
    {"minPercentageOfNodesToFind", ArgumentKind::kInt, "5", ArgumentSupport::kHonoured,
     "floor of the adaptive percentage of nodes searched"},
    {"percentageOfNodesToFind", ArgumentKind::kInt, "0", ArgumentSupport::kHonoured,
     "percentage of nodes searched per task; 0: adaptive, as kube-scheduler"},
      {kPredicateErrorCacheEnable, ArgumentKind::kBool, "true", ArgumentSupport::kIgnored,
       "Lahar always caches predicate verdicts per constraint class"},
  };
}

absl::Status ValidateNodeSearchArguments(const Arguments& arguments) {
  // The ranges of Session::Open, which applies the values.
  RETURN_IF_ERROR(arguments.GetInt("minNodesToFind", 100, 1, 1 << 30).status());
  RETURN_IF_ERROR(arguments.GetInt("minPercentageOfNodesToFind", 5, 1, 100).status());
  RETURN_IF_ERROR(arguments.GetInt("percentageOfNodesToFind", 0, 0, 100).status());
  return absl::OkStatus();
}

}  // namespace lahar
