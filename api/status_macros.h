// Propagation helpers for absl::Status across module boundaries.
#ifndef LAHAR_API_STATUS_MACROS_H_
#define LAHAR_API_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define LAHAR_CONCAT_INNER_(a, b) a##b
#define LAHAR_CONCAT_(a, b) LAHAR_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` is not OK.
#define RETURN_IF_ERROR(expr)                \
  do {                                       \
    ::absl::Status lahar_status_ = (expr);   \
    if (!lahar_status_.ok()) return lahar_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Foo());` binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(LAHAR_CONCAT_(lahar_statusor_, __LINE__), lhs, rexpr)
#define ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                           \
  if (!statusor.ok()) return statusor.status();      \
  lhs = std::move(statusor).value()

namespace lahar {
// Prefixes a status message with where the error was found ("nodes[2].allocatable: ...").
inline absl::Status Annotate(const absl::Status& status, std::string_view where) {
  if (status.ok()) return status;
  return absl::Status(status.code(), std::string(where) + ": " + std::string(status.message()));
}
}  // namespace lahar

#endif  // LAHAR_API_STATUS_MACROS_H_
