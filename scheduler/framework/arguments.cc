#include "scheduler/framework/arguments.h"

#include <algorithm>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar {

absl::Status Arguments::Error(std::string_view key, std::string_view what) const {
  return absl::InvalidArgumentError(StrCat(owner_, ": argument ", key, ": ", what));
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
  if (it->second == "true" || it->second == "True") return true;
  if (it->second == "false" || it->second == "False") return false;
  return Error(key, StrCat("\"", it->second, "\" is not true or false"));
}

absl::StatusOr<Millis> Arguments::GetDuration(std::string_view key, Millis default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  auto value = ParseDuration(it->second);
  if (!value.ok()) return Error(key, FromAbsl(value.status().message()));
  return *value;
}

absl::Status Arguments::ExpectNone() const {
  if (values_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(owner_, ": unknown argument \"", values_.begin()->first, "\" (it takes no arguments)"));
}

absl::Status Arguments::ExpectOnly(std::initializer_list<std::string_view> keys) const {
  for (const auto& [key, value] : values_) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string valid;
    for (std::string_view k : keys) StrAppend(&valid, valid.empty() ? "" : ", ", k);
    return absl::InvalidArgumentError(StrCat(owner_, ": unknown argument \"", key, "\" (valid arguments: ", valid, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateNodeSearchArguments(const Arguments& arguments) {
  RETURN_IF_ERROR(arguments.ExpectOnly({"minNodesToFind", "minPercentageOfNodesToFind", "percentageOfNodesToFind"}));
  // The ranges of Session::Open, which applies the values.
  RETURN_IF_ERROR(arguments.GetInt("minNodesToFind", 100, 1, 1 << 30).status());
  RETURN_IF_ERROR(arguments.GetInt("minPercentageOfNodesToFind", 5, 1, 100).status());
  RETURN_IF_ERROR(arguments.GetInt("percentageOfNodesToFind", 0, 0, 100).status());
  return absl::OkStatus();
}

}  // namespace lahar
