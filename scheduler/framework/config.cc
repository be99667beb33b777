#include "scheduler/framework/config.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/decode.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/volcano.h"

namespace lahar {
namespace {

constexpr char kDefaultConfig[] = R"(actions: "enqueue, allocate, preempt-elastic-workers, reclaim, preempt, elastic-scale, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: elastic
    arguments:
      elastic.cooldown: 60s
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
)";

std::string Where(const YAML::Node& node) {
  return StrCat("line ", node.Mark().line + 1);
}

absl::Status ErrorAt(const YAML::Node& node, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("scheduler configuration, ", Where(node), ": ", what));
}

// An error of a plugin's or action's arguments, which names its line itself (Arguments::Error).
absl::Status ArgumentError(const absl::Status& status) {
  return absl::InvalidArgumentError(StrCat("scheduler configuration, ", FromAbsl(status.message())));
}

// A list or map as one line of flow YAML ("[a, b]", "{cpu: 80}").
std::string FlowYaml(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

// Reads `arguments:` as flat key -> value text (scalars as written, lists and maps as flow
// YAML), with each key's line.
absl::StatusOr<Arguments> ReadArguments(const YAML::Node& node, std::string owner) {
  std::map<std::string, std::string, std::less<>> values;
  std::map<std::string, Arguments::Source, std::less<>> sources;
  if (node && !node.IsNull()) {
    if (!node.IsMap()) return ErrorAt(node, StrCat(owner, ": arguments must be a map"));
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return ErrorAt(kv.first, StrCat(owner, ": an argument name must be a string"));
      const std::string& key = kv.first.Scalar();
      const bool structured = kv.second.IsSequence() || kv.second.IsMap();
      if (!values.emplace(key, structured ? FlowYaml(kv.second) : kv.second.Scalar()).second) {
        return ErrorAt(kv.first, StrCat(owner, ": argument ", key, " is set twice"));
      }
      sources.emplace(key, Arguments::Source{static_cast<int>(kv.first.Mark().line) + 1, structured});
    }
  }
  return Arguments(std::move(owner), std::move(values), std::move(sources));
}

// Flags of extension points Lahar has no hook for, whose `true` a plugin honours anyway: the
// capacity plugin always divides along the queue tree (spec 2.1), Volcano's hierarchical mode.
bool HonouredByDesign(std::string_view plugin, ExtensionPoint point) {
  return point == ExtensionPoint::kHierarchy && (plugin == "capacity" || plugin == "proportion");
}

// A Volcano name Lahar lacks is named as such rather than as a misspelling, so that a user
// moving from Volcano knows what to take out.
std::string UnknownName(std::string_view kind, std::string_view name, bool volcano_only,
                        const std::vector<std::string>& valid) {
  if (volcano_only) {
    return StrCat(kind, " \"", name, "\" is a Volcano ", kind, " that Lahar does not support; remove it (Lahar's ",
                  kind, "s: ", absl::StrJoin(valid, ", "), ")");
  }
  return StrCat("unknown ", kind, " \"", name, "\" (valid ", kind, "s: ", absl::StrJoin(valid, ", "), ")");
}

absl::StatusOr<PluginOption> ReadPluginOption(const YAML::Node& node, const Registry& registry,
                                              std::vector<std::string>& warnings) {
  if (!node.IsMap()) return ErrorAt(node, "a plugin must be a map with a name");
  PluginOption option;
  const YAML::Node name = node["name"];
  if (!name || !name.IsScalar() || name.Scalar().empty()) return ErrorAt(node, "plugin without a name");
  option.name = name.Scalar();
  if (!registry.HasPlugin(option.name)) {
    return ErrorAt(name, UnknownName("plugin", option.name, IsVolcanoPlugin(option.name),
                                     registry.PluginNames()));
  }
  for (const auto& kv : node) {
    const std::string& key = kv.first.Scalar();
    if (key == "name") continue;
    if (key == "arguments") {
      ASSIGN_OR_RETURN(option.arguments, ReadArguments(kv.second, StrCat("plugin ", option.name)));
      continue;
    }
    bool known = false;
    for (const ExtensionPointFlag& flag : kExtensionPointFlags) {
      if (key != flag.yaml_key) continue;
      known = true;
      const std::optional<bool> v = kv.second.IsScalar() ? ParseBoolWord(kv.second.Scalar()) : std::nullopt;
      if (!v.has_value()) {
        return ErrorAt(kv.second, StrCat("plugin ", option.name, ": ", key, " must be true or false"));
      }
      if (!flag.in_lahar && *v && !HonouredByDesign(option.name, flag.point)) {
        return ErrorAt(kv.first, StrCat("plugin ", option.name, ": ", key,
                                        ": true asks for Volcano behaviour that Lahar does not have; remove it"));
      }
      option.enabled[static_cast<size_t>(flag.point)] = *v;
    }
    if (!known) {
      std::vector<std::string_view> keys = {"name", "arguments"};
      for (const ExtensionPointFlag& flag : kExtensionPointFlags) keys.push_back(flag.yaml_key);
      std::vector<std::string> key_strings(keys.begin(), keys.end());
      return ErrorAt(kv.first, StrCat("plugin ", option.name, ": unknown key \"", key,
                                      "\" (valid keys: ", absl::StrJoin(key_strings, ", "), ")"));
    }
  }
  auto ignored = registry.CheckPluginArguments(option.name, option.arguments);
  if (!ignored.ok()) return ArgumentError(ignored.status());
  warnings.insert(warnings.end(), ignored->begin(), ignored->end());
  // Construct once so that malformed values are reported now, not at the first session.
  auto plugin = registry.NewPlugin(option.name, option.arguments);
  if (!plugin.ok()) return ArgumentError(plugin.status());
  return option;
}

// A YAML double-quoted scalar: backslashes, quotes and control characters escaped.
std::string Quoted(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += StrFormat("\\x%02x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

// One `key: value` argument line at `indent`. YAML limits an implicit key to 1024 characters, so a
// longer (escaped) key is written as an explicit one ("? key" then ": value").
// A structured value is written as the flow YAML it was read as.
std::string ArgumentEntry(std::string_view indent, std::string_view key, std::string_view value, bool structured) {
  const std::string quoted_key = Quoted(key);
  const std::string text = structured ? std::string(value) : Quoted(value);
  if (quoted_key.size() < 1024) return StrCat(indent, quoted_key, ": ", text, "\n");
  return StrCat(indent, "? ", quoted_key, "\n", indent, ": ", text, "\n");
}

}  // namespace

const Arguments& SchedulerConfig::ActionArguments(std::string_view action) const {
  static const Arguments* empty = new Arguments();
  auto it = action_arguments.find(action);
  return it == action_arguments.end() ? *empty : it->second;
}

bool SchedulerConfig::HasAction(std::string_view action) const {
  return std::find(actions.begin(), actions.end(), action) != actions.end();
}

std::string SchedulerConfig::ToYaml() const {
  std::string out = StrCat("actions: \"", absl::StrJoin(actions, ", "), "\"\ntiers:\n");
  for (const Tier& tier : tiers) {
    out += "- plugins:\n";
    for (const PluginOption& plugin : tier.plugins) {
      StrAppend(&out, "  - name: ", plugin.name, "\n");
      for (const ExtensionPointFlag& flag : kExtensionPointFlags) {
        const auto& value = plugin.enabled[static_cast<size_t>(flag.point)];
        if (value.has_value()) StrAppend(&out, "    ", flag.yaml_key, ": ", *value, "\n");
      }
      if (!plugin.arguments.values().empty()) {
        out += "    arguments:\n";
        for (const auto& [key, value] : plugin.arguments.values()) {
          out += ArgumentEntry("      ", key, value, plugin.arguments.IsStructured(key));
        }
      }
    }
  }
  if (!action_arguments.empty()) {
    out += "configurations:\n";
    for (const auto& [name, args] : action_arguments) {
      StrAppend(&out, "- name: ", name, "\n  arguments:\n");
      for (const auto& [key, value] : args.values()) {
        out += ArgumentEntry("    ", key, value, args.IsStructured(key));
      }
    }
  }
  return out;
}

std::string_view DefaultSchedulerConfigYaml() { return kDefaultConfig; }

absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml, const Registry& registry) {
  ASSIGN_OR_RETURN(std::vector<YAML::Node> docs, ParseYamlDocuments(yaml));
  if (docs.empty() || docs[0].IsNull()) {
    return absl::InvalidArgumentError("scheduler configuration is empty");
  }
  if (docs.size() > 1) {
    return absl::InvalidArgumentError("scheduler configuration has more than one YAML document");
  }
  return ParseSchedulerConfigNode(docs[0], registry);
}

absl::StatusOr<SchedulerConfig> ParseSchedulerConfigNode(const YAML::Node& root,
                                                         const Registry& registry) {
  if (!root.IsMap()) return ErrorAt(root, "expected a map with actions and tiers");
  SchedulerConfig config;
  for (const auto& kv : root) {
    const std::string& key = kv.first.Scalar();
    if (key != "actions" && key != "tiers" && key != "configurations" && key != "metrics") {
      return ErrorAt(kv.first, StrCat("unknown key \"", key,
                                      "\" (valid keys: actions, tiers, configurations, metrics)"));
    }
  }
  const YAML::Node actions = root["actions"];
  if (!actions || !actions.IsScalar()) return ErrorAt(root, "missing actions (a comma-separated string)");
  for (absl::string_view piece : absl::StrSplit(actions.Scalar(), ',')) {
    std::string name(absl::StripAsciiWhitespace(piece));
    if (name.empty()) continue;
    if (!registry.HasAction(name)) {
      return ErrorAt(actions, UnknownName("action", name, IsVolcanoAction(name), registry.ActionNames()));
    }
    if (config.HasAction(name)) return ErrorAt(actions, StrCat("action \"", name, "\" appears twice"));
    config.actions.push_back(std::move(name));
  }
  if (config.actions.empty()) return ErrorAt(actions, "no actions");

  const YAML::Node configurations = root["configurations"];
  if (configurations && !configurations.IsNull()) {
    if (!configurations.IsSequence()) return ErrorAt(configurations, "configurations must be a list");
    for (const YAML::Node& entry : configurations) {
      if (!entry.IsMap() || !entry["name"] || !entry["name"].IsScalar()) {
        return ErrorAt(entry, "a configuration needs a name");
      }
      std::string name = entry["name"].Scalar();
      if (!registry.HasAction(name)) {
        return ErrorAt(entry["name"], StrCat("configuration for ", UnknownName("action", name, IsVolcanoAction(name),
                                                                      registry.ActionNames())));
      }
      if (config.action_arguments.count(name) > 0) {
        return ErrorAt(entry["name"], StrCat("configuration for action \"", name, "\" appears twice"));
      }
      ASSIGN_OR_RETURN(Arguments args, ReadArguments(entry["arguments"], StrCat("action ", name)));
      auto ignored = registry.CheckActionArguments(name, args);
      if (!ignored.ok()) return ArgumentError(ignored.status());
      config.warnings.insert(config.warnings.end(), ignored->begin(), ignored->end());
      config.action_arguments[name] = std::move(args);
    }
  }
  for (const std::string& name : config.actions) {
    auto action = registry.NewAction(name, config.ActionArguments(name));
    if (!action.ok()) return ArgumentError(action.status());
  }

  const YAML::Node tiers = root["tiers"];
  if (!tiers || !tiers.IsSequence()) return ErrorAt(root, "missing tiers (a list of plugin lists)");
  std::set<std::string, std::less<>> seen;
  for (const YAML::Node& tier_node : tiers) {
    if (!tier_node.IsMap() || !tier_node["plugins"] || !tier_node["plugins"].IsSequence()) {
      return ErrorAt(tier_node, "a tier must be a map with a list of plugins");
    }
    if (tier_node["plugins"].size() == 0) return ErrorAt(tier_node, "a tier without plugins");
    Tier tier;
    for (const YAML::Node& plugin_node : tier_node["plugins"]) {
      ASSIGN_OR_RETURN(PluginOption option, ReadPluginOption(plugin_node, registry, config.warnings));
      if (!seen.insert(option.name).second) {
        return ErrorAt(plugin_node, StrCat("plugin \"", option.name, "\" appears twice"));
      }
      tier.plugins.push_back(std::move(option));
    }
    config.tiers.push_back(std::move(tier));
  }
  return config;
}

}  // namespace lahar
