// DecodeObjectStream on arbitrary text: every malformed input must come back as a Status,
// never as a crash, a hang or an escaped yaml-cpp exception.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "api/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto objects = lahar::DecodeObjectStream(text);
  // Touch the result so a decoded-but-corrupt object is read under the sanitizers.
  if (objects.ok()) {
    for (const auto& object : *objects) {
      std::visit([](const auto& o) { return o.meta.name.size(); }, object);
    }
  }
  return 0;
}
