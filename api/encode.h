// Encoding of Lahar's object model back to Kubernetes JSON: the inverse of decode.h.
//
// Every field the decoder reads is written, in the shape `kubectl get -o json` prints, so that
// Decode(Encode(x)) == x for any object the decoder produced. Two decoded facts have no single
// source form and are written canonically:
//   - a pod's requests and limits are the effective ones (containers, init containers and
//     overhead already combined), written as one container named "main" and no overhead;
//   - ObjectMeta keeps only whether deletion started, so a deleting object gets the placeholder
//     deletionTimestamp "1970-01-01T00:00:00Z" (the decoder only tests for its presence).
// Empty optional fields are left out; output depends only on the input (maps are sorted).
#ifndef LAHAR_API_ENCODE_H_
#define LAHAR_API_ENCODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/decode.h"
#include "api/objects.h"
#include "rapidjson/document.h"

namespace lahar {

// Each sets `out` to a complete object with apiVersion, kind, metadata, spec and status.
// Strings are copied into `allocator`, so `out` does not refer to the input.
void EncodeNode(const Node& node, rapidjson::Value& out,
                rapidjson::Document::AllocatorType& allocator);
void EncodePod(const Pod& pod, rapidjson::Value& out,
               rapidjson::Document::AllocatorType& allocator);
void EncodePodGroup(const PodGroup& group, rapidjson::Value& out,
                    rapidjson::Document::AllocatorType& allocator);
void EncodeQueue(const Queue& queue, rapidjson::Value& out,
                 rapidjson::Document::AllocatorType& allocator);
void EncodePriorityClass(const PriorityClass& priority_class, rapidjson::Value& out,
                         rapidjson::Document::AllocatorType& allocator);
void EncodePodDisruptionBudget(const PodDisruptionBudget& pdb, rapidjson::Value& out,
                               rapidjson::Document::AllocatorType& allocator);
void EncodeHyperNode(const HyperNode& hypernode, rapidjson::Value& out,
                     rapidjson::Document::AllocatorType& allocator);
// Dispatches on the alternative held.
void EncodeObject(const KubeObject& object, rapidjson::Value& out,
                  rapidjson::Document::AllocatorType& allocator);

// Sets `out` to the map {name: quantity} of the non-zero amounts, in resource id order, each
// formatted with FormatQuantity in the resource's unit ("1500m", "4Gi", "8"). Negative amounts
// are written as they are, although DecodeResourceList refuses them.
void EncodeResourceList(const Resources& resources, rapidjson::Value& out,
                        rapidjson::Document::AllocatorType& allocator);

// Formats seconds since the epoch as RFC 3339 in UTC ("2024-01-02T03:04:05Z"), the inverse of
// ParseTimestamp.
std::string FormatTimestamp(int64_t seconds);

// A `{"apiVersion": "v1", "kind": "List", "items": [...]}` document (indented JSON, which is
// also YAML) holding the nodes, pods, podgroups, queues, priority classes and disruption budgets
// in that order and in the order given: what `kubectl get nodes,pods,podgroups,queues,
// priorityclasses,poddisruptionbudgets -A -o json` (then HyperNodes, cluster-scoped)
// prints, and a snapshot lahar-sim loads (spec 6.2). Null pointers are not allowed.
std::string EncodeObjectList(const std::vector<const Node*>& nodes,
                             const std::vector<const Pod*>& pods,
                             const std::vector<const PodGroup*>& groups,
                             const std::vector<const Queue*>& queues,
                             const std::vector<const PriorityClass*>& priority_classes,
                             const std::vector<const PodDisruptionBudget*>& disruption_budgets = {},
                             const std::vector<const HyperNode*>& hypernodes = {});

}  // namespace lahar

#endif  // LAHAR_API_ENCODE_H_
