// Typed access to the `arguments:` map of a plugin or action in volcano-scheduler.conf.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_ARGUMENTS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_ARGUMENTS_H_

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/duration.h"

namespace lahar {

// Values are kept as the YAML scalars' text; getters parse on demand and name the owner and
// key in every error ("plugin elastic: argument elastic.cooldown: invalid duration ...").
class Arguments {
 public:
  Arguments() = default;
  Arguments(std::string owner, std::map<std::string, std::string, std::less<>> values)
      : owner_(std::move(owner)), values_(std::move(values)) {}

  bool Has(std::string_view key) const { return values_.find(key) != values_.end(); }
  absl::StatusOr<std::string> GetString(std::string_view key, std::string default_value) const;
  absl::StatusOr<int64_t> GetInt(std::string_view key, int64_t default_value, int64_t min,
                                 int64_t max) const;
  absl::StatusOr<double> GetDouble(std::string_view key, double default_value, double min,
                                   double max) const;
  absl::StatusOr<bool> GetBool(std::string_view key, bool default_value) const;
  absl::StatusOr<Millis> GetDuration(std::string_view key, Millis default_value) const;
  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }
  const std::string& owner() const { return owner_; }
  // For an action or plugin that takes no arguments: an error naming the first key, if any.
  absl::Status ExpectNone() const;
  // An error naming the first key that is not one of `keys`, listing the valid ones.
  absl::Status ExpectOnly(std::initializer_list<std::string_view> keys) const;

 private:
  absl::Status Error(std::string_view key, std::string_view what) const;

  std::string owner_;
  std::map<std::string, std::string, std::less<>> values_;
};

// Checks the node-search arguments shared by allocate and backfill, with the ranges
// Session::Open applies; any other key is an error that lists the valid ones.
absl::Status ValidateNodeSearchArguments(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_ARGUMENTS_H_
