// A scenario file's node with the path that led to it, read from YAML or from JSON (the same
// scenario written as JSON loads in a fraction of the time and memory, which matters for traces
// of tens of thousands of jobs). Errors say "line 12: jobs[1].tasks[0]...: ..." (JSON: no line).
#ifndef LAHAR_SCHEDULER_SIM_SCENARIO_READER_H_
#define LAHAR_SCHEDULER_SIM_SCENARIO_READER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/duration.h"
#include "api/objects.h"
#include "api/resources.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "rapidjson/document.h"
#include "yaml-cpp/yaml.h"

namespace lahar {

class ScenarioNode {
 public:
  ScenarioNode(YAML::Node node, std::string path) : yaml_(std::move(node)), path_(std::move(path)) {}
  // `value` null: absent.
  ScenarioNode(const rapidjson::Value* value, std::string path) : json_(value), is_json_(true), path_(std::move(path)) {}

  bool present() const;
  bool IsScalar() const;
  bool IsMap() const;
  // The text of a scalar as written ("" for anything else).
  std::string ScalarText() const;
  // 1-based line in the file; 0 when unknown (JSON).
  int Line() const;
  const std::string& path() const { return path_; }

  ScenarioNode operator[](std::string_view key) const;

  absl::Status Error(std::string_view what) const;
  absl::Status ExpectMap(std::initializer_list<std::string_view> keys) const;
  absl::StatusOr<std::string> Str(std::string default_value = "") const;
  absl::StatusOr<int64_t> Int(int64_t default_value, int64_t min, int64_t max) const;
  absl::StatusOr<Millis> Duration(Millis default_value) const;
  absl::StatusOr<Resources> ResourceList() const;
  absl::StatusOr<StringMap> Map() const;
  // The node as JSON (Kubernetes-shaped sub-objects go through the object decoder) or YAML (the
  // inline scheduler configuration).
  rapidjson::Document ToJson() const;
  YAML::Node ToYaml() const;

  // fn(const ScenarioNode& item) for each item of a list (absent: none).
  template <typename Fn>
  absl::Status ForEach(Fn fn) const {
    if (!present()) return absl::OkStatus();
    if (!IsSequence()) return Error("expected a list");
    for (size_t i = 0; i < Size(); ++i) RETURN_IF_ERROR(fn(At(i)));
    return absl::OkStatus();
  }
  // fn(const std::string& key, const ScenarioNode& value) for each entry of a map, in file order.
  template <typename Fn>
  absl::Status ForEachEntry(Fn fn) const {
    if (!present()) return absl::OkStatus();
    if (!IsMap()) return Error("expected a map");
    if (is_json_) {
      for (const auto& m : json_->GetObject()) {
        const std::string key(m.name.GetString(), m.name.GetStringLength());
        RETURN_IF_ERROR(fn(key, ScenarioNode(&m.value, StrCat(path_, ".", key))));
      }
      return absl::OkStatus();
    }
    for (const auto& kv : yaml_) {
      const std::string& key = kv.first.Scalar();
      RETURN_IF_ERROR(fn(key, ScenarioNode(kv.second, StrCat(path_, ".", key))));
    }
    return absl::OkStatus();
  }

 private:
  bool IsSequence() const;
  size_t Size() const;
  ScenarioNode At(size_t i) const;

  YAML::Node yaml_;
  const rapidjson::Value* json_ = nullptr;
  bool is_json_ = false;
  std::string path_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_SCENARIO_READER_H_
