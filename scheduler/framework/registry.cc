#include "scheduler/framework/registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "api/strings.h"

namespace lahar {
namespace {

template <typename Map>
std::vector<std::string> Names(const Map& map) {
  std::vector<std::string> names;
  for (const auto& [name, factory] : map) names.push_back(name);
  return names;
}

}  // namespace

absl::Status Registry::RegisterPlugin(std::string name, PluginFactory factory) {
  if (plugins_.count(name) > 0) return absl::AlreadyExistsError(StrCat("plugin ", name, " is already registered"));
  plugins_.emplace(std::move(name), std::move(factory));
  return absl::OkStatus();
}

absl::Status Registry::RegisterAction(std::string name, ActionFactory factory) {
  if (actions_.count(name) > 0) return absl::AlreadyExistsError(StrCat("action ", name, " is already registered"));
  actions_.emplace(std::move(name), std::move(factory));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Plugin>> Registry::NewPlugin(std::string_view name,
                                                            const Arguments& arguments) const {
  auto it = plugins_.find(name);
  if (it == plugins_.end()) {
    return absl::NotFoundError(StrCat("unknown plugin \"", name, "\" (valid plugins: ",
                                      absl::StrJoin(PluginNames(), ", "), ")"));
  }
  return it->second(arguments);
}

absl::StatusOr<std::unique_ptr<Action>> Registry::NewAction(std::string_view name,
                                                            const Arguments& arguments) const {
  auto it = actions_.find(name);
  if (it == actions_.end()) {
    return absl::NotFoundError(StrCat("unknown action \"", name, "\" (valid actions: ",
                                      absl::StrJoin(ActionNames(), ", "), ")"));
  }
  return it->second(arguments);
}

std::vector<std::string> Registry::PluginNames() const { return Names(plugins_); }
std::vector<std::string> Registry::ActionNames() const { return Names(actions_); }

}  // namespace lahar
