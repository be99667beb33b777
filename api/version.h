// The version of this build, from `git describe` when it was built (hack/version.cmake): what
// `--version` prints and what the image is tagged with.
#ifndef LAHAR_API_VERSION_H_
#define LAHAR_API_VERSION_H_

#include <string_view>

namespace lahar {

std::string_view LaharVersion();

}  // namespace lahar

#endif  // LAHAR_API_VERSION_H_
