// Named factories of actions and plugins. The registry is an object that callers fill
// explicitly (RegisterBuiltinActions / RegisterBuiltinPlugins), never a static initializer.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_REGISTRY_H_
#define LAHAR_SCHEDULER_FRAMEWORK_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Factories validate the values of their arguments (ranges, lists) and return InvalidArgument
// naming the bad one; the registry has checked keys and kinds against the declared arguments
// before it calls them.
using PluginFactory = std::function<absl::StatusOr<std::unique_ptr<Plugin>>(const Arguments&)>;
using ActionFactory = std::function<absl::StatusOr<std::unique_ptr<Action>>(const Arguments&)>;

class Registry {
 public:
  // AlreadyExists when the name is taken. `arguments`: every key the plugin or action accepts.
  absl::Status RegisterPlugin(std::string name, PluginFactory factory, std::vector<ArgumentSpec> arguments);
  absl::Status RegisterAction(std::string name, ActionFactory factory, std::vector<ArgumentSpec> arguments);

  // CheckArguments against the declared arguments: the warnings for keys accepted but not acted
  // on. NotFound when `name` is unknown.
  absl::StatusOr<std::vector<std::string>> CheckPluginArguments(std::string_view name,
                                                                const Arguments& arguments) const;
  absl::StatusOr<std::vector<std::string>> CheckActionArguments(std::string_view name,
                                                                const Arguments& arguments) const;
  const std::vector<ArgumentSpec>& PluginArguments(std::string_view name) const;
  const std::vector<ArgumentSpec>& ActionArguments(std::string_view name) const;

  // Checks the arguments and calls the factory. NotFound listing the valid names when `name`
  // is unknown.
  absl::StatusOr<std::unique_ptr<Plugin>> NewPlugin(std::string_view name,
                                                    const Arguments& arguments) const;
  absl::StatusOr<std::unique_ptr<Action>> NewAction(std::string_view name,
                                                    const Arguments& arguments) const;
  bool HasPlugin(std::string_view name) const { return plugins_.count(name) > 0; }
  bool HasAction(std::string_view name) const { return actions_.count(name) > 0; }
  std::vector<std::string> PluginNames() const;
  std::vector<std::string> ActionNames() const;

 private:
  template <typename Factory>
  struct Entry {
    Factory factory;
    std::vector<ArgumentSpec> arguments;
  };
  std::map<std::string, Entry<PluginFactory>, std::less<>> plugins_;
  std::map<std::string, Entry<ActionFactory>, std::less<>> actions_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_REGISTRY_H_
