// Kubernetes resource quantities ("500m", "1.5", "4Gi", "1e3", "2k"), parsed exactly.
//
// A quantity is converted once, at decode time, to an int64 count of its canonical unit:
// millicores for cpu, and the plain unit (bytes, GPUs, pods) for everything else. Like
// Kubernetes' Quantity.MilliValue()/Value(), a fractional remainder rounds up (towards +inf).
// Values that do not fit in int64 are an error rather than silently clamped.
#ifndef LAHAR_API_QUANTITY_H_
#define LAHAR_API_QUANTITY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace lahar {

enum class QuantityUnit {
  kMilli,  // result is value * 1000 (cpu)
  kUnit,   // result is value (memory, storage, extended resources, pods)
};

// Parses `text` with Kubernetes' grammar (signed decimal number, then one of the binary
// suffixes Ki..Ei, decimal suffixes m,k,M,G,T,P,E, or an exponent e<n>/E<n>).
absl::StatusOr<int64_t> ParseQuantity(std::string_view text, QuantityUnit unit);

// Formats a canonical amount back as a Kubernetes quantity ("1500m", "4Gi", "3").
std::string FormatQuantity(int64_t amount, QuantityUnit unit);

}  // namespace lahar

#endif  // LAHAR_API_QUANTITY_H_
