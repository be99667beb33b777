#include "api/json_writer.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rapidjson/document.h"

namespace lahar {
namespace {

// What the writer writes for `value` as a field of an object, read back out of the object.
std::string AsField(std::string_view value) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  StringField(w, "k", value);
  w.EndObject();
  const std::string object(buffer.GetString(), buffer.GetSize());
  return object.substr(5, object.size() - 6);  // between {"k": and }
}

TEST_CASE("JsonString writes a string as the writer does inside an object") {
  const std::vector<std::string> values = {"default/job-1", "", "say \"hi\"", "back\\slash", "tab\there",
                                  std::string("nul\0byte", 8), "line\nbreak\x01", "gr\xc3\xbc\xc3\x9f"};
  for (const std::string& value : values) {
    CAPTURE(value);
    const std::string written = JsonString(value);
    CHECK(written == AsField(value));
    rapidjson::Document doc;
    doc.Parse(written.data(), written.size());
    REQUIRE_FALSE(doc.HasParseError());
    CHECK(std::string(doc.GetString(), doc.GetStringLength()) == value);
  }
}

}  // namespace
}  // namespace lahar
