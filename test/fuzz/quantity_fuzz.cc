// ParseQuantity on arbitrary bytes, in both units. It must never crash, and whatever it accepts
// must survive FormatQuantity -> ParseQuantity unchanged (the snapshot writer relies on that).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (lahar::QuantityUnit unit : {lahar::QuantityUnit::kMilli, lahar::QuantityUnit::kUnit}) {
    auto parsed = lahar::ParseQuantity(text, unit);
    if (!parsed.ok()) continue;
    std::string formatted = lahar::FormatQuantity(*parsed, unit);
    auto reparsed = lahar::ParseQuantity(formatted, unit);
    if (!reparsed.ok() || *reparsed != *parsed) {
      std::fprintf(stderr, "round trip failed: \"%.*s\" -> %lld -> \"%s\" -> %s\n",
                   static_cast<int>(size), text.data(), static_cast<long long>(*parsed),
                   formatted.c_str(),
                   reparsed.ok() ? std::to_string(*reparsed).c_str()
                                 : std::string(reparsed.status().message()).c_str());
      std::abort();
    }
  }
  return 0;
}
