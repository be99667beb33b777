// YAML text to JSON values: the one YAML reader behind configuration, scenario and snapshot
// files, bounded against alias cycles and bombs, with errors that name line and column.
#ifndef LAHAR_API_YAML_H_
#define LAHAR_API_YAML_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"
#include "yaml-cpp/yaml.h"

namespace lahar {

// Parses a YAML text into its documents; syntax errors carry line and column.
absl::StatusOr<std::vector<YAML::Node>> ParseYamlDocuments(std::string_view text);

// Converts a YAML node to JSON. Plain scalars that read as integers become numbers, true/false
// booleans, null/~ null; every other scalar (also quoted numbers) stays a string.
void YamlToJson(const YAML::Node& node, rapidjson::Value& out,
                rapidjson::Document::AllocatorType& allocator);

// YamlToJson with an error instead of a partial value when the node nests too deeply or expands
// through aliases beyond `nodes_left` nodes (decremented, so one budget spans several calls).
absl::Status ConvertYamlToJson(const YAML::Node& node, rapidjson::Value& out,
                               rapidjson::Document::AllocatorType& allocator, int64_t& nodes_left);

}  // namespace lahar

#endif  // LAHAR_API_YAML_H_
