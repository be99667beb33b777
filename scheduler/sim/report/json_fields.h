// Typed access to the fields of events.jsonl and summary.json. Errors name the field; callers
// add the file and the line. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_JSON_FIELDS_H_
#define LAHAR_SCHEDULER_SIM_REPORT_JSON_FIELDS_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace lahar::report_internal {

absl::Status FieldError(std::string_view field, std::string_view expected);

// nullptr when `key` is absent or null: the simulator writes null for "not applicable".
const rapidjson::Value* Member(const rapidjson::Value& object, const char* key);

// The view points into `object`, so it lives as long as the document.
absl::StatusOr<std::string_view> RequiredString(const rapidjson::Value& object, const char* key);
// Empty when absent or null.
absl::StatusOr<std::string> OptionalString(const rapidjson::Value& object, const char* key);
absl::StatusOr<std::optional<double>> OptionalNumber(const rapidjson::Value& object,
                                                     const char* key);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_JSON_FIELDS_H_
