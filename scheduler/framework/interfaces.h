// The two extension interfaces of the scheduler: actions (steps of a session) and plugins
// (policies that register hooks with the session). Implementations live under actions/ and
// plugins/ and are created by name through the Registry.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_INTERFACES_H_
#define LAHAR_SCHEDULER_FRAMEWORK_INTERFACES_H_

#include <string_view>

namespace lahar {

class Session;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
  // Registers the plugin's hooks and computes per-session state. A plugin object lives for
  // exactly one session.
  virtual void OnSessionOpen(Session& session) = 0;
  virtual void OnSessionClose(Session& session) {}
};

class Action {
 public:
  virtual ~Action() = default;
  virtual std::string_view Name() const = 0;
  virtual void Execute(Session& session) = 0;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_INTERFACES_H_
