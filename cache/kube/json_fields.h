// Reading fields of objects the apiserver sent, where any field may be missing or of another
// type: a missing or mistyped field reads as empty (so callers never test HasMember first).
#ifndef LAHAR_CACHE_KUBE_JSON_FIELDS_H_
#define LAHAR_CACHE_KUBE_JSON_FIELDS_H_

#include <cstdint>
#include <string>

#include "rapidjson/document.h"

namespace lahar {

// The object at `key`, or an empty object.
inline const rapidjson::Value& ObjectField(const rapidjson::Value& object, const char* key) {
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  if (!object.IsObject()) return kEmpty;
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsObject() ? it->value : kEmpty;
}

inline std::string StringField(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

inline int64_t IntField(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return 0;
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

// metadata.<key>: name, namespace, uid, resourceVersion.
inline std::string MetadataField(const rapidjson::Value& object, const char* key) {
  return StringField(ObjectField(object, "metadata"), key);
}

}  // namespace lahar

#endif  // LAHAR_CACHE_KUBE_JSON_FIELDS_H_
