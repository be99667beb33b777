// Decoding of Kubernetes objects from JSON (the apiserver) and YAML (files), with errors that
// say which object and which field was wrong.
#ifndef LAHAR_API_DECODE_H_
#define LAHAR_API_DECODE_H_

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "api/objects.h"
#include "api/yaml.h"
#include "rapidjson/document.h"

namespace lahar {

using KubeObject = std::variant<Node, Pod, PodGroup, Queue, PriorityClass, PodDisruptionBudget, HyperNode>;

absl::StatusOr<Node> DecodeNode(const rapidjson::Value& json);
absl::StatusOr<Pod> DecodePod(const rapidjson::Value& json);
absl::StatusOr<PodGroup> DecodePodGroup(const rapidjson::Value& json);
absl::StatusOr<Queue> DecodeQueue(const rapidjson::Value& json);
absl::StatusOr<PriorityClass> DecodePriorityClass(const rapidjson::Value& json);
absl::StatusOr<PodDisruptionBudget> DecodePodDisruptionBudget(const rapidjson::Value& json);
absl::StatusOr<HyperNode> DecodeHyperNode(const rapidjson::Value& json);
// PodGroup spec.networkTopology at `json`; `where` prefixes error messages (scenario files).
absl::StatusOr<NetworkTopology> DecodeNetworkTopology(const rapidjson::Value& json, std::string_view where);

// Decodes by `kind`. Kinds Lahar does not schedule with (ConfigMap, Service, ...) give
// NotFound so callers may skip them; a known kind with a bad field gives InvalidArgument.
absl::StatusOr<KubeObject> DecodeObject(const rapidjson::Value& json);

// Parses every object of a YAML stream (several documents) or of a `kind: List`, as printed
// by `kubectl get ... -o yaml`. Unknown kinds are skipped; errors name the document and field.
absl::StatusOr<std::vector<KubeObject>> DecodeObjectStream(std::string_view text);

// Reads the resource list {name: quantity} at `json`; `where` prefixes error messages.
absl::StatusOr<Resources> DecodeResourceList(const rapidjson::Value& json, std::string_view where);

// Parses an RFC 3339 timestamp ("2024-01-02T03:04:05Z") to seconds since the epoch.
absl::StatusOr<int64_t> ParseTimestamp(std::string_view text);

}  // namespace lahar

#endif  // LAHAR_API_DECODE_H_
