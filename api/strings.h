// String building that accepts std::string_view. Debian's abseil (20220623) is built with its
// own absl::string_view, so absl::StrCat refuses std::string_view arguments; Lahar's code uses
// std::string_view throughout and builds strings with these helpers instead.
#ifndef LAHAR_API_STRINGS_H_
#define LAHAR_API_STRINGS_H_

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace lahar {

inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view FromAbsl(absl::string_view s) { return std::string_view(s.data(), s.size()); }

namespace strings_internal {
inline void AppendPiece(std::string& out, std::string_view s) { out.append(s); }
inline void AppendPiece(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
inline void AppendPiece(std::string& out, const char* s) { out.append(s); }
inline void AppendPiece(std::string& out, const std::string& s) { out.append(s); }
inline void AppendPiece(std::string& out, char c) { out.push_back(c); }
inline void AppendPiece(std::string& out, bool b) { out.append(b ? "true" : "false"); }
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
void AppendPiece(std::string& out, T value) {
  char buf[24];
  auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}
// Shortest representation that reads back to the same double ("0.1", "1e+21").
void AppendPiece(std::string& out, double value);
inline void AppendPiece(std::string& out, float value) { AppendPiece(out, static_cast<double>(value)); }
}  // namespace strings_internal

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (strings_internal::AppendPiece(*out, args), ...);
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  StrAppend(&out, args...);
  return out;
}

// Text made safe inside HTML elements and quoted attributes (& < > " ').
std::string HtmlEscape(std::string_view text);

// printf-style formatting into a std::string.
std::string StrFormat(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace lahar

#endif  // LAHAR_API_STRINGS_H_
