// The default tiers of volcano-scheduler.conf (priority and gang; drf, predicates, proportion and
// nodeorder) under the actions a test runs, shared by the tests of actions and plugins.
#ifndef LAHAR_TEST_TESTING_DEFAULT_TIERS_H_
#define LAHAR_TEST_TESTING_DEFAULT_TIERS_H_

#include <string>
#include <string_view>

namespace lahar::testing {

// `actions` as the configuration's actions string, e.g. "enqueue, allocate".
inline std::string DefaultTiersConfig(std::string_view actions) {
  return "actions: \"" + std::string(actions) + R"("
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
)";
}

}  // namespace lahar::testing

#endif  // LAHAR_TEST_TESTING_DEFAULT_TIERS_H_
