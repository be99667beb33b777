#include "scheduler/framework/volcano.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "api/strings.h"
#include "scheduler/framework/config.h"

namespace lahar {
namespace {

constexpr std::string_view kVolcanoActions[] = {"enqueue", "allocate",    "backfill",    "reclaim",
                                                "preempt", "gangpreempt", "gangreclaim", "shuffle"};
// "numaaware" is how Volcano's older documents spell "numa-aware".
constexpr std::string_view kVolcanoPlugins[] = {
    "binpack",  "capacity",     "cdp",       "conformance", "deviceshare", "drf",
    "extender", "gang",         "network-topology-aware",   "nodegroup",   "nodeorder",
    "numa-aware", "numaaware",  "overcommit", "pdb",        "predicates",  "priority",
    "proportion", "rescheduling", "resource-strategy-fit", "resourcequota", "sla",
    "task-topology", "tdm",     "usage"};

template <size_t N>
bool Contains(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

std::string ArgumentsCell(const std::vector<ArgumentSpec>& specs) {
  if (specs.empty()) return "none";
  std::string cell;
  for (const ArgumentSpec& spec : specs) {
    if (!cell.empty()) cell += "<br>";
    StrAppend(&cell, "`", spec.key, "` ", ArgumentKindName(spec.kind));
    if (!spec.default_value.empty()) StrAppend(&cell, ", default `", spec.default_value, "`");
    if (spec.support == ArgumentSupport::kIgnored) cell += ", accepted with a warning";
    if (!spec.meaning.empty()) StrAppend(&cell, ": ", spec.meaning);
  }
  return cell;
}

template <size_t N>
void AppendRows(std::string& out, std::string_view kind, const std::string_view (&volcano)[N],
                const std::vector<std::string>& lahar, const std::vector<ArgumentSpec>& (Registry::*declared)(std::string_view) const,
                const Registry& registry) {
  std::set<std::string_view> names(std::begin(volcano), std::end(volcano));
  names.insert(lahar.begin(), lahar.end());
  for (std::string_view name : names) {
    const bool in_lahar = std::find(lahar.begin(), lahar.end(), name) != lahar.end();
    const bool in_volcano = Contains(volcano, name);
    const std::string_view status = !in_lahar ? "not supported (an error naming it)" : in_volcano ? "supported" : "Lahar's own";
    StrAppend(&out, "| ", kind, " | `", name, "` | ", status, " | ",
              in_lahar ? ArgumentsCell((registry.*declared)(name)) : "", " |\n");
  }
}

}  // namespace

bool IsVolcanoAction(std::string_view name) { return Contains(kVolcanoActions, name); }
bool IsVolcanoPlugin(std::string_view name) { return Contains(kVolcanoPlugins, name); }

std::string VolcanoCompatibilityTable(const Registry& registry) {
  std::string out = "| kind | name | in Lahar | arguments |\n|---|---|---|---|\n";
  AppendRows(out, "action", kVolcanoActions, registry.ActionNames(), &Registry::ActionArguments, registry);
  AppendRows(out, "plugin", kVolcanoPlugins, registry.PluginNames(), &Registry::PluginArguments, registry);
  out += "\n| plugin enable flag | in Lahar |\n|---|---|\n";
  for (const ExtensionPointFlag& flag : kExtensionPointFlags) {
    StrAppend(&out, "| `", flag.yaml_key, "` | ",
              flag.in_lahar ? "honoured: `false` turns that hook of the plugin off (unset: on)"
                            : "no such hook in Lahar: `false` accepted, `true` an error",
              flag.point == ExtensionPoint::kHierarchy ? " (but `capacity` and `proportion` always follow the queue tree)" : "",
              " |\n");
  }
  return out;
}

}  // namespace lahar
