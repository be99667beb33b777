#include "scheduler/builtins.h"

#include <cstdio>
#include <cstdlib>

namespace lahar {

const Registry& BuiltinRegistry() {
  static const Registry* registry = [] {
    auto* r = new Registry();
    absl::Status status = RegisterBuiltinActions(*r);
    if (status.ok()) status = RegisterBuiltinPlugins(*r);
    if (!status.ok()) {
      // A duplicate built-in name is a programming error, not bad input.
      std::fprintf(stderr, "lahar: registering built-ins failed: %s\n", status.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

}  // namespace lahar
