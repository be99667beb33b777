#include "api/quantity.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "api/strings.h"

namespace lahar {
namespace {

// Exact arithmetic on a decimal digit string (most significant first). Quantities are short,
// so schoolbook operations are both simplest and fast enough.
using Digits = std::vector<uint8_t>;

void MultiplySmall(Digits& digits, uint32_t factor) {
  uint64_t carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    uint64_t product = uint64_t{*it} * factor + carry;
    *it = static_cast<uint8_t>(product % 10);
    carry = product / 10;
  }
  while (carry > 0) {
    digits.insert(digits.begin(), static_cast<uint8_t>(carry % 10));
    carry /= 10;
  }
}

void StripLeadingZeros(Digits& digits) {
  auto first = std::find_if(digits.begin(), digits.end(), [](uint8_t d) { return d != 0; });
  digits.erase(digits.begin(), first);
}

absl::Status Invalid(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("invalid quantity \"", text, "\": ", why));
}

struct Suffix {
  int decimal_exponent = 0;
  int binary_exponent = 0;
};

// Parses the suffix after the number; returns false when it is not one Kubernetes knows.
bool ParseSuffix(std::string_view s, Suffix& out) {
  static constexpr struct {
    std::string_view name;
    int decimal_exponent;
    int binary_exponent;
  } kSuffixes[] = {
      {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},
      {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
      {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50},
      {"Ei", 0, 60},
  };
  for (const auto& suffix : kSuffixes) {
    if (s == suffix.name) {
      out = {suffix.decimal_exponent, suffix.binary_exponent};
      return true;
    }
  }
  // Exponent form: e<signed int> or E<signed int>.
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    std::string_view rest = s.substr(1);
    bool negative = false;
    if (rest[0] == '+' || rest[0] == '-') {
      negative = rest[0] == '-';
      rest.remove_prefix(1);
    }
    if (rest.empty() || rest.size() > 6) return false;  // |exponent| < 10^6 is plenty
    int value = 0;
    for (char c : rest) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
      value = value * 10 + (c - '0');
    }
    out = {negative ? -value : value, 0};
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantity(std::string_view text, QuantityUnit unit) {
  if (text.empty()) return Invalid(text, "empty");
  std::string_view rest = text;
  bool negative = false;
  if (rest[0] == '+' || rest[0] == '-') {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  Digits mantissa;
  int fraction_digits = 0;
  bool seen_point = false;
  size_t digit_count = 0;
  size_t pos = 0;
  for (; pos < rest.size(); ++pos) {
    char c = rest[pos];
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      mantissa.push_back(static_cast<uint8_t>(c - '0'));
      ++digit_count;
      if (seen_point) ++fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (digit_count == 0) return Invalid(text, "no digits");
  Suffix suffix;
  if (!ParseSuffix(rest.substr(pos), suffix)) {
    return Invalid(text, StrCat("unknown suffix \"", rest.substr(pos),
                                      "\" (want one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, "
                                      "Ti, Pi, Ei or an exponent such as e3)"));
  }

  StripLeadingZeros(mantissa);
  if (mantissa.empty()) return int64_t{0};
  // value = mantissa * 10^exponent10 * 2^binary_exponent, in the requested unit.
  int64_t exponent10 = int64_t{suffix.decimal_exponent} - fraction_digits +
                       (unit == QuantityUnit::kMilli ? 3 : 0);
  // Bound the work: anything this far out either overflows or rounds up to one unit.
  if (exponent10 + static_cast<int64_t>(mantissa.size()) > 40) {
    return absl::OutOfRangeError(StrCat("quantity \"", text, "\" is too large"));
  }
  for (int i = 0; i < suffix.binary_exponent; i += 10) MultiplySmall(mantissa, 1024);
  bool inexact = false;
  if (exponent10 >= 0) {
    mantissa.insert(mantissa.end(), static_cast<size_t>(exponent10), 0);
  } else {
    size_t drop = static_cast<size_t>(-exponent10);
    if (drop >= mantissa.size()) {
      inexact = true;  // non-zero, below one unit
      mantissa.clear();
    } else {
      inexact = std::any_of(mantissa.end() - drop, mantissa.end(), [](uint8_t d) { return d; });
      mantissa.resize(mantissa.size() - drop);
    }
  }
  StripLeadingZeros(mantissa);
  if (mantissa.size() > 19) {
    return absl::OutOfRangeError(StrCat("quantity \"", text, "\" is too large"));
  }
  unsigned __int128 magnitude = 0;
  for (uint8_t d : mantissa) magnitude = magnitude * 10 + d;
  // Round towards +inf: up for positive values, towards zero for negative ones.
  if (inexact && !negative) ++magnitude;
  // -2^63 fits although 2^63 does not, so every int64 FormatQuantity prints reads back.
  const auto limit = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) +
                     (negative ? 1 : 0);
  if (magnitude > limit) {
    return absl::OutOfRangeError(StrCat("quantity \"", text, "\" is too large"));
  }
  return negative ? static_cast<int64_t>(-magnitude) : static_cast<int64_t>(magnitude);
}

std::string FormatQuantity(int64_t amount, QuantityUnit unit) {
  if (unit == QuantityUnit::kMilli) {
    if (amount % 1000 == 0) return StrCat(amount / 1000);
    return StrCat(amount, "m");
  }
  static constexpr std::string_view kBinary[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  if (amount != 0) {
    for (int i = 0; i < 6; ++i) {
      int shift = 60 - 10 * i;
      int64_t step = int64_t{1} << shift;
      if (amount % step == 0) return StrCat(amount / step, kBinary[i]);
    }
  }
  return StrCat(amount);
}

}  // namespace lahar
