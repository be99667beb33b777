#include "scheduler/sim/report/json_fields.h"

#include "api/strings.h"

namespace lahar::report_internal {

absl::Status FieldError(std::string_view field, std::string_view expected) {
  return absl::InvalidArgumentError(StrCat("\"", field, "\" must be ", expected));
}

const rapidjson::Value* Member(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

absl::StatusOr<std::string_view> RequiredString(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* value = Member(object, key);
  if (value == nullptr || !value->IsString()) return FieldError(key, "a string");
  return std::string_view(value->GetString(), value->GetStringLength());
}

absl::StatusOr<std::string> OptionalString(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* value = Member(object, key);
  if (value == nullptr) return std::string();
  if (!value->IsString()) return FieldError(key, "a string");
  return std::string(value->GetString(), value->GetStringLength());
}

absl::StatusOr<std::optional<double>> OptionalNumber(const rapidjson::Value& object,
                                                     const char* key) {
  const rapidjson::Value* value = Member(object, key);
  if (value == nullptr) return std::optional<double>();
  if (!value->IsNumber()) return FieldError(key, "a number or null");
  return std::optional<double>(value->GetDouble());
}

}  // namespace lahar::report_internal
