#include "scheduler/framework/registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar {
namespace {

template <typename Map>
std::vector<std::string> Names(const Map& map) {
  std::vector<std::string> names;
  for (const auto& [name, factory] : map) names.push_back(name);
  return names;
}

template <typename Map, typename Factory>
absl::Status Register(Map& map, std::string_view kind, std::string name, Factory factory,
                      std::vector<ArgumentSpec> arguments) {
  if (map.count(name) > 0) return absl::AlreadyExistsError(StrCat(kind, " ", name, " is already registered"));
  map.emplace(std::move(name), typename Map::mapped_type{std::move(factory), std::move(arguments)});
  return absl::OkStatus();
}

template <typename Map>
absl::StatusOr<const typename Map::mapped_type*> Find(const Map& map, std::string_view kind,
                                                      std::string_view name) {
  auto it = map.find(name);
  if (it == map.end()) {
    return absl::NotFoundError(StrCat("unknown ", kind, " \"", name, "\" (valid ", kind, "s: ",
                                      absl::StrJoin(Names(map), ", "), ")"));
  }
  return &it->second;
}

template <typename Map>
absl::StatusOr<std::vector<std::string>> Check(const Map& map, std::string_view kind, std::string_view name,
                                               const Arguments& arguments) {
  ASSIGN_OR_RETURN(const auto* entry, Find(map, kind, name));
  return CheckArguments(arguments, entry->arguments);
}

template <typename Map>
const std::vector<ArgumentSpec>& DeclaredArguments(const Map& map, std::string_view name) {
  static const std::vector<ArgumentSpec>* none = new std::vector<ArgumentSpec>();
  auto it = map.find(name);
  return it == map.end() ? *none : it->second.arguments;
}

}  // namespace

absl::Status Registry::RegisterPlugin(std::string name, PluginFactory factory, std::vector<ArgumentSpec> arguments) {
  return Register(plugins_, "plugin", std::move(name), std::move(factory), std::move(arguments));
}

absl::Status Registry::RegisterAction(std::string name, ActionFactory factory, std::vector<ArgumentSpec> arguments) {
  return Register(actions_, "action", std::move(name), std::move(factory), std::move(arguments));
}

absl::StatusOr<std::vector<std::string>> Registry::CheckPluginArguments(std::string_view name,
                                                                        const Arguments& arguments) const {
  return Check(plugins_, "plugin", name, arguments);
}

absl::StatusOr<std::vector<std::string>> Registry::CheckActionArguments(std::string_view name,
                                                                        const Arguments& arguments) const {
  return Check(actions_, "action", name, arguments);
}

const std::vector<ArgumentSpec>& Registry::PluginArguments(std::string_view name) const {
  return DeclaredArguments(plugins_, name);
}

const std::vector<ArgumentSpec>& Registry::ActionArguments(std::string_view name) const {
  return DeclaredArguments(actions_, name);
}

absl::StatusOr<std::unique_ptr<Plugin>> Registry::NewPlugin(std::string_view name,
                                                            const Arguments& arguments) const {
  ASSIGN_OR_RETURN(const auto* entry, Find(plugins_, "plugin", name));
  RETURN_IF_ERROR(CheckArguments(arguments, entry->arguments).status());
  return entry->factory(arguments);
}

absl::StatusOr<std::unique_ptr<Action>> Registry::NewAction(std::string_view name,
                                                            const Arguments& arguments) const {
  ASSIGN_OR_RETURN(const auto* entry, Find(actions_, "action", name));
  RETURN_IF_ERROR(CheckArguments(arguments, entry->arguments).status());
  return entry->factory(arguments);
}

std::vector<std::string> Registry::PluginNames() const { return Names(plugins_); }
std::vector<std::string> Registry::ActionNames() const { return Names(actions_); }

}  // namespace lahar
