// Configurations of the elastic actions alone (plugin elastic, cooldown 60s), shared by the
// tests of the elastic plugin, elastic-scale, preempt-elastic-workers and the sessions' WaitMemo.
#ifndef LAHAR_TEST_TESTING_ELASTIC_CONFIGS_H_
#define LAHAR_TEST_TESTING_ELASTIC_CONFIGS_H_

#include <string>
#include <string_view>

namespace lahar::testing {

// `actions` (as the configuration's actions string) over the elastic plugin alone.
inline std::string ElasticOnlyConfig(std::string_view actions) {
  return "actions: \"" + std::string(actions) + R"("
tiers:
- plugins:
  - name: elastic
    arguments:
      elastic.cooldown: 60s
)";
}

inline const std::string kScaleOnly = ElasticOnlyConfig("elastic-scale");
inline const std::string kPreemptOnly = ElasticOnlyConfig("preempt-elastic-workers");
inline const std::string kScaleAndPreempt = ElasticOnlyConfig("elastic-scale, preempt-elastic-workers");

}  // namespace lahar::testing

#endif  // LAHAR_TEST_TESTING_ELASTIC_CONFIGS_H_
