// volcano-scheduler.conf: actions, tiers of plugins with enable flags and arguments, and
// per-action configurations.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_CONFIG_H_
#define LAHAR_SCHEDULER_FRAMEWORK_CONFIG_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/registry.h"
#include "yaml-cpp/yaml.h"

namespace lahar {

// The extension points a plugin can fill. Those with a Volcano `enable*` flag take their YAML
// key from kExtensionPointFlags, the single table of flag names.
enum class ExtensionPoint {
  kJobOrder,
  kQueueOrder,
  kTaskOrder,
  kNamespaceOrder,
  kPredicate,
  kNodeOrder,
  kBestNode,
  kJobReady,
  kJobPipelined,
  kJobStarving,
  kJobEnqueued,
  kPreemptable,
  kReclaimable,
  kPreemptive,
  kVictim,
  kOverused,
  kAllocatable,
  kHierarchy,
  kTargetJob,
  kReservedNodes,
  kClusterOrder,
  kHyperNodeOrder,
  kSubJobReady,
  kSubJobPipelined,
  kSubJobOrder,
  kHyperNodeGradient,
  // Always on: no flag (Volcano has none for job validity either).
  kJobValid,
  // Lahar's elastic extension points (no Volcano flag).
  kElasticOrder,
  kScalable,
  kElasticPredicate,
  kCount,
};
inline constexpr size_t kExtensionPointCount = static_cast<size_t>(ExtensionPoint::kCount);

struct ExtensionPointFlag {
  ExtensionPoint point;
  std::string_view yaml_key;
  // Lahar has this extension point: `false` turns the plugin's contribution to it off. Where it
  // has not, `false` asks for nothing and is accepted, `true` asks for Volcano behaviour Lahar
  // does not have and is an error naming the flag.
  bool in_lahar = true;
};
// Volcano's PluginOption keys, spelled as Volcano spells them (some say "enabled").
inline constexpr ExtensionPointFlag kExtensionPointFlags[] = {
    {ExtensionPoint::kJobOrder, "enableJobOrder"},
    {ExtensionPoint::kHierarchy, "enableHierarchy", false},
    {ExtensionPoint::kJobReady, "enableJobReady"},
    {ExtensionPoint::kJobPipelined, "enableJobPipelined"},
    {ExtensionPoint::kTaskOrder, "enableTaskOrder"},
    {ExtensionPoint::kPreemptable, "enablePreemptable"},
    {ExtensionPoint::kReclaimable, "enableReclaimable"},
    {ExtensionPoint::kPreemptive, "enablePreemptive", false},
    {ExtensionPoint::kQueueOrder, "enableQueueOrder"},
    {ExtensionPoint::kClusterOrder, "enabledClusterOrder", false},
    {ExtensionPoint::kPredicate, "enablePredicate"},
    {ExtensionPoint::kBestNode, "enableBestNode", false},
    {ExtensionPoint::kNodeOrder, "enableNodeOrder"},
    {ExtensionPoint::kTargetJob, "enableTargetJob", false},
    {ExtensionPoint::kReservedNodes, "enableReservedNodes", false},
    {ExtensionPoint::kJobEnqueued, "enableJobEnqueued"},
    {ExtensionPoint::kVictim, "enabledVictim", false},
    {ExtensionPoint::kJobStarving, "enableJobStarving"},
    {ExtensionPoint::kOverused, "enabledOverused"},
    {ExtensionPoint::kAllocatable, "enabledAllocatable"},
    {ExtensionPoint::kHyperNodeOrder, "enabledHyperNodeOrder"},
    {ExtensionPoint::kSubJobReady, "enabledSubJobReady", false},
    {ExtensionPoint::kSubJobPipelined, "enabledSubJobPipelined", false},
    {ExtensionPoint::kSubJobOrder, "enabledSubJobOrder", false},
    {ExtensionPoint::kHyperNodeGradient, "enabledHyperNodeGradient", false},
    {ExtensionPoint::kNamespaceOrder, "enableNamespaceOrder", false},
};

struct PluginOption {
  std::string name;
  std::array<std::optional<bool>, kExtensionPointCount> enabled{};
  Arguments arguments;

  // Unset flags mean enabled, as in Volcano.
  bool IsEnabled(ExtensionPoint point) const {
    return enabled[static_cast<size_t>(point)].value_or(true);
  }
};

struct Tier {
  std::vector<PluginOption> plugins;
};

struct SchedulerConfig {
  std::vector<std::string> actions;
  std::vector<Tier> tiers;
  // `configurations:` entries: arguments of actions by action name.
  std::map<std::string, Arguments, std::less<>> action_arguments;
  // What the file sets that Lahar accepts but does not act on (Volcano's keys), one line each,
  // for the log and lahar-sim's stderr. Not part of ToYaml.
  std::vector<std::string> warnings;

  const Arguments& ActionArguments(std::string_view action) const;
  // Whether `action` runs in every session (enqueue and proportion count what evicting actions
  // could take).
  bool HasAction(std::string_view action) const;
  // The config as YAML text (canonical form; used in reports and /debug).
  std::string ToYaml() const;
};

// The default configuration of the spec (section 4).
std::string_view DefaultSchedulerConfigYaml();

// Parses and validates: every action and plugin must exist in `registry` (a Volcano one that
// Lahar lacks is named as unsupported), no action or plugin twice, no empty tier, every argument
// declared by its plugin or action and of its kind, every value well formed (checked by
// constructing each plugin and action once). Errors name the line and the key.
absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml, const Registry& registry);
absl::StatusOr<SchedulerConfig> ParseSchedulerConfigNode(const YAML::Node& node,
                                                         const Registry& registry);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_CONFIG_H_
