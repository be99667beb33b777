// Typed access to the `arguments:` map of a plugin or action in volcano-scheduler.conf.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_ARGUMENTS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_ARGUMENTS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "api/duration.h"

namespace lahar {

// Values are kept as the YAML scalars' text; getters parse on demand and name the owner and
// key in every error ("plugin elastic: argument elastic.cooldown: invalid duration ...").
class Arguments {
 public:
  Arguments() = default;
  // Where a key was written, and whether its value is a YAML list or map (kept as flow YAML).
  struct Source {
    int line = 0;  // 1-based; 0: unknown
    bool structured = false;
  };
  Arguments(std::string owner, std::map<std::string, std::string, std::less<>> values,
            std::map<std::string, Source, std::less<>> sources = {})
      : owner_(std::move(owner)), values_(std::move(values)), sources_(std::move(sources)) {}

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
  bool IsStructured(std::string_view key) const;
  // InvalidArgument "line N: <owner>: argument <key>: <what>" (the line when known).
  absl::Status Error(std::string_view key, std::string_view what) const;
  // InvalidArgument "line N: <message>", N the line of `key` when known.
  absl::Status ErrorAtKey(std::string_view key, std::string_view message) const;

 private:
  std::string owner_;
  std::map<std::string, std::string, std::less<>> values_;
  std::map<std::string, Source, std::less<>> sources_;
};

// A boolean as Volcano's configuration reads one: YAML 1.1's words (true, yes, on, y and their
// capitalisations; false, no, off, n) and Go's strconv.ParseBool (1, t, T, 0, f, F). nullopt
// for anything else.
std::optional<bool> ParseBoolWord(std::string_view text);

// The declared arguments of a plugin or action: what a configuration may set, checked before
// the factory runs, listed in the README's compatibility table.
enum class ArgumentKind {
  kInt,
  kNumber,
  kBool,
  kDuration,
  kString,
  kStructured,  // a YAML list or map (only Volcano's keys that Lahar ignores take one)
};

enum class ArgumentSupport {
  kHonoured,
  // A key Volcano defines for this plugin whose behaviour Lahar does not have: accepted, so
  // that Volcano's files load, with a warning naming it.
  kIgnored,
};

struct ArgumentSpec {
  // The exact key, or a family of keys when it ends in '*' ("binpack.resources.*").
  std::string_view key;
  ArgumentKind kind;
  std::string_view default_value;  // as written in a file; empty: none
  ArgumentSupport support = ArgumentSupport::kHonoured;
  std::string_view meaning = {};

  bool Matches(std::string_view candidate) const;
};

std::string_view ArgumentKindName(ArgumentKind kind);

// Checks every key of `arguments` against `specs`: an undeclared key, or a value that is not of
// its declared kind, is an error naming the key and listing the valid ones. Returns a warning
// per key that is accepted but not acted on (ArgumentSupport::kIgnored).
absl::StatusOr<std::vector<std::string>> CheckArguments(const Arguments& arguments,
                                                        absl::Span<const ArgumentSpec> specs);

// Volcano's switch of its predicate error cache, read by allocate, backfill, preempt, reclaim.
inline constexpr std::string_view kPredicateErrorCacheEnable = "predicateErrorCacheEnable";

// The arguments of allocate and backfill (node search, and Volcano's predicate cache switch),
// and the check of the node-search ranges (those Session::Open applies).
std::vector<ArgumentSpec> NodeSearchArgumentSpecs();
absl::Status ValidateNodeSearchArguments(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_ARGUMENTS_H_
