// Writing JSON with RapidJSON's streaming writer: the few helpers every output of Lahar's
// (events.jsonl, summary.json, the daemon's debug endpoints, its writes to the apiserver) needs.
#ifndef LAHAR_API_JSON_WRITER_H_
#define LAHAR_API_JSON_WRITER_H_

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/resources.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace lahar {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// `s` as a JSON string, quoted and escaped exactly as the writer writes it: for output made
// once and written many times.
inline std::string JsonString(std::string_view s) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartArray();
  WriteString(w, s);
  w.EndArray();
  return std::string(buffer.GetString() + 1, buffer.GetSize() - 2);  // without the brackets
}

// One key and its value. Named per type: an overload set would send a string literal to the
// bool one.
inline void StringField(JsonWriter& w, std::string_view key, std::string_view value) {
  WriteString(w, key);
  WriteString(w, value);
}
inline void IntField(JsonWriter& w, std::string_view key, int64_t value) {
  WriteString(w, key);
  w.Int64(value);
}
inline void BoolField(JsonWriter& w, std::string_view key, bool value) {
  WriteString(w, key);
  w.Bool(value);
}

// Resources in canonical units (millicores, bytes, counts), keys sorted by name so the output
// is stable.
inline void WriteResources(JsonWriter& w, const Resources& r) {
  std::vector<std::pair<std::string, int64_t>> entries;
  for (const auto& [id, amount] : r.NonZero()) entries.emplace_back(ResourceName(id), amount);
  std::sort(entries.begin(), entries.end());
  w.StartObject();
  for (const auto& [name, amount] : entries) {
    WriteString(w, name);
    w.Int64(amount);
  }
  w.EndObject();
}
inline void ResourcesField(JsonWriter& w, std::string_view key, const Resources& r) {
  WriteString(w, key);
  WriteResources(w, r);
}

}  // namespace lahar

#endif  // LAHAR_API_JSON_WRITER_H_
