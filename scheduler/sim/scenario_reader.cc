#include "scheduler/sim/scenario_reader.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "api/quantity.h"
#include "api/yaml.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace lahar {

bool ScenarioNode::present() const {
  if (is_json_) return json_ != nullptr && !json_->IsNull();
  return yaml_.IsDefined() && !yaml_.IsNull();
}

bool ScenarioNode::IsScalar() const {
  if (is_json_) return json_ != nullptr && (json_->IsString() || json_->IsNumber() || json_->IsBool());
  return yaml_.IsScalar();
}

bool ScenarioNode::IsMap() const { return is_json_ ? json_ != nullptr && json_->IsObject() : yaml_.IsMap(); }
bool ScenarioNode::IsSequence() const { return is_json_ ? json_ != nullptr && json_->IsArray() : yaml_.IsSequence(); }
size_t ScenarioNode::Size() const { return is_json_ ? json_->Size() : yaml_.size(); }

ScenarioNode ScenarioNode::At(size_t i) const {
  std::string child = StrCat(path_, "[", i, "]");
  if (is_json_) return ScenarioNode(&(*json_)[static_cast<rapidjson::SizeType>(i)], std::move(child));
  return ScenarioNode(yaml_[i], std::move(child));
}

std::string ScenarioNode::ScalarText() const {
  if (!IsScalar()) return "";
  if (!is_json_) return yaml_.Scalar();
  if (json_->IsString()) return std::string(json_->GetString(), json_->GetStringLength());
  if (json_->IsBool()) return json_->GetBool() ? "true" : "false";
  // A number as JSON writes it (integers exactly, others in their shortest round-trip form).
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  json_->Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

int ScenarioNode::Line() const {
  if (is_json_ || !yaml_.IsDefined()) return 0;
  return yaml_.Mark().line + 1;
}

ScenarioNode ScenarioNode::operator[](std::string_view key) const {
  std::string child = path_.empty() ? std::string(key) : StrCat(path_, ".", key);
  if (is_json_) {
    if (!IsMap()) return ScenarioNode(static_cast<const rapidjson::Value*>(nullptr), std::move(child));
    auto it = json_->FindMember(rapidjson::Value(rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size()))));
    return ScenarioNode(it == json_->MemberEnd() ? nullptr : &it->value, std::move(child));
  }
  if (!yaml_.IsMap()) return ScenarioNode(YAML::Node(YAML::NodeType::Undefined), std::move(child));
  return ScenarioNode(yaml_[std::string(key)], std::move(child));
}

absl::Status ScenarioNode::Error(std::string_view what) const {
  const int line = Line();
  if (line > 0) return absl::InvalidArgumentError(StrCat("line ", line, ": ", path_, ": ", what));
  return absl::InvalidArgumentError(StrCat(path_, ": ", what));
}

absl::Status ScenarioNode::ExpectMap(std::initializer_list<std::string_view> keys) const {
  if (!IsMap()) return Error("expected a map");
  auto unknown = [&](const std::string& key, const ScenarioNode& where) -> absl::Status {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return absl::OkStatus();
    std::string valid;
    for (std::string_view k : keys) StrAppend(&valid, valid.empty() ? "" : ", ", k);
    return where.Error(StrCat("unknown key \"", key, "\" (valid keys: ", valid, ")"));
  };
  if (is_json_) {
    for (const auto& m : json_->GetObject()) RETURN_IF_ERROR(unknown(m.name.GetString(), *this));
    return absl::OkStatus();
  }
  for (const auto& kv : yaml_) RETURN_IF_ERROR(unknown(kv.first.Scalar(), ScenarioNode(kv.first, path_)));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ScenarioNode::Str(std::string default_value) const {
  if (!present()) return default_value;
  if (!IsScalar()) return Error("expected a single value");
  return ScalarText();
}

absl::StatusOr<int64_t> ScenarioNode::Int(int64_t default_value, int64_t min, int64_t max) const {
  if (!present()) return default_value;
  ASSIGN_OR_RETURN(std::string s, Str());
  int64_t v;
  if (!absl::SimpleAtoi(absl::string_view(s), &v)) return Error(StrCat("\"", s, "\" is not an integer"));
  if (v < min) return Error(StrCat(v < 0 ? "negative value " : "value ", v, " (must be at least ", min, ")"));
  if (v > max) return Error(StrCat("value ", v, " is larger than ", max));
  return v;
}

absl::StatusOr<Millis> ScenarioNode::Duration(Millis default_value) const {
  if (!present()) return default_value;
  ASSIGN_OR_RETURN(std::string s, Str());
  auto d = ParseDuration(s);
  if (!d.ok()) return Error(FromAbsl(d.status().message()));
  return *d;
}

absl::StatusOr<Resources> ScenarioNode::ResourceList() const {
  Resources out;
  if (!present()) return out;
  if (!IsMap()) return Error("expected a map of resource quantities");
  RETURN_IF_ERROR(ForEachEntry([&](const std::string& name, const ScenarioNode& value) -> absl::Status {
    ASSIGN_OR_RETURN(std::string text, value.Str());
    auto interned = InternInputResource(name);
    if (!interned.ok()) return value.Error(FromAbsl(interned.status().message()));
    const ResourceId id = *interned;
    auto amount = ParseQuantity(text, ResourceUnit(id));
    if (!amount.ok()) return value.Error(FromAbsl(amount.status().message()));
    if (*amount < 0) return value.Error(StrCat("negative quantity \"", text, "\""));
    out.Set(id, *amount);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<StringMap> ScenarioNode::Map() const {
  StringMap out;
  if (!present()) return out;
  RETURN_IF_ERROR(ForEachEntry([&](const std::string& key, const ScenarioNode& value) -> absl::Status {
    if (!value.IsScalar()) return value.Error("expected a single value");
    out[key] = value.ScalarText();
    return absl::OkStatus();
  }));
  return out;
}

rapidjson::Document ScenarioNode::ToJson() const {
  rapidjson::Document doc;
  if (is_json_) {
    if (json_ != nullptr) doc.CopyFrom(*json_, doc.GetAllocator());
  } else {
    YamlToJson(yaml_, doc, doc.GetAllocator());
  }
  return doc;
}

YAML::Node ScenarioNode::ToYaml() const {
  if (!is_json_) return yaml_;
  if (json_ == nullptr) return YAML::Node();
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  json_->Accept(writer);
  return YAML::Load(std::string(buffer.GetString(), buffer.GetSize()));  // JSON is YAML
}

}  // namespace lahar
