#include "scheduler/daemon/status_patcher.h"

#include "api/log.h"
#include "api/strings.h"
#include "rapidjson/document.h"

namespace lahar {
namespace {

constexpr std::string_view kStatusSuffix = "/status";

// RFC 7386: a patch that is an object merges field by field (null removes), anything else
// replaces the target.
bool Applied(const rapidjson::Value& patch, const rapidjson::Value& object) {
  if (!patch.IsObject()) return patch == object;
  if (!object.IsObject()) return false;
  for (const auto& field : patch.GetObject()) {
    auto it = object.FindMember(field.name);
    const bool present = it != object.MemberEnd() && !it->value.IsNull();
    if (field.value.IsNull()) {
      if (present) return false;
    } else if (!present || !Applied(field.value, it->value)) {
      return false;
    }
  }
  return true;
}

std::string Names(const std::set<std::string, std::less<>>& names) {
  std::string out;
  for (const std::string& name : names) StrAppend(&out, out.empty() ? "" : ", ", name);
  return out.empty() ? "none" : out;
}

}  // namespace

absl::StatusOr<std::set<std::string, std::less<>>> ResourcesWithStatus(std::string_view api_resource_list) {
  rapidjson::Document doc;
  doc.Parse(api_resource_list.data(), api_resource_list.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("resources") || !doc["resources"].IsArray()) {
    return absl::InvalidArgumentError("the discovery answer is not an APIResourceList (no resources array)");
  }
  std::set<std::string, std::less<>> out;
  for (const rapidjson::Value& resource : doc["resources"].GetArray()) {
    if (!resource.IsObject() || !resource.HasMember("name") || !resource["name"].IsString()) continue;
    std::string_view name(resource["name"].GetString(), resource["name"].GetStringLength());
    if (name.size() > kStatusSuffix.size() && name.substr(name.size() - kStatusSuffix.size()) == kStatusSuffix &&
        name.find('/') == name.size() - kStatusSuffix.size()) {
      out.emplace(name.substr(0, name.size() - kStatusSuffix.size()));
    }
  }
  return out;
}

bool MergePatchApplied(std::string_view patch, std::string_view object) {
  rapidjson::Document p, o;
  p.Parse(patch.data(), patch.size());
  o.Parse(object.data(), object.size());
  return !p.HasParseError() && !o.HasParseError() && Applied(p, o);
}

StatusPatcher::StatusPatcher(RequestFn send, std::string group_version_path)
    : send_(std::move(send)), group_version_path_(std::move(group_version_path)) {}

StatusPatcher::StatusPatcher(KubeClient& client, std::string group_version_path)
    : StatusPatcher(
          [&client](std::string_view method, std::string_view target, std::string_view body,
                    std::string_view content_type) { return client.Request(method, target, body, content_type); },
          std::move(group_version_path)) {}

absl::StatusOr<HttpResult> StatusPatcher::Patch(std::string_view resource, std::string_view object_path,
                                                std::string_view patch) {
  std::shared_ptr<const Discovered> seen = Current();
  const bool to_subresource = !seen->answered || seen->with_status.count(resource) > 0;
  absl::StatusOr<HttpResult> result = SendPatch(object_path, to_subresource, patch);
  if (!result.ok()) return result;
  // With a status subresource the apiserver keeps status as it was on writes to the object.
  const bool dropped = !to_subresource && result->ok() && !MergePatchApplied(patch, result->body);
  const bool missing = to_subresource && result->status == 404;  // or the object is gone
  if (!dropped && !missing) return result;
  Forget(seen);
  const bool now = HasStatusSubresource(resource);
  if (now != to_subresource) {
    LAHAR_WARN("status") << resource << (now ? " now has" : " no longer has")
                         << " a status subresource (API discovery): status is written to "
                         << (now ? "OBJECT/status" : "the object itself");
    return SendPatch(object_path, now, patch);
  }
  if (dropped) {
    return absl::UnavailableError(StrCat("PATCH ", object_path, ": the apiserver kept the status as it was (", resource,
                                         " seems to have a status subresource that API discovery does not show yet)"));
  }
  return result;
}

bool StatusPatcher::HasStatusSubresource(std::string_view resource) {
  std::shared_ptr<const Discovered> d = Current();
  return !d->answered || d->with_status.count(resource) > 0;
}

int64_t StatusPatcher::discoveries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return discoveries_;
}

std::shared_ptr<const StatusPatcher::Discovered> StatusPatcher::Current() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_ != nullptr) return current_;
  }
  // Outside the lock: writers of other resources need not wait for this request.
  auto discovered = std::make_shared<Discovered>();
  absl::StatusOr<HttpResult> answer = send_("GET", group_version_path_, "", "application/json");
  absl::StatusOr<std::set<std::string, std::less<>>> with_status =
      !answer.ok()    ? absl::StatusOr<std::set<std::string, std::less<>>>(answer.status())
      : !answer->ok() ? absl::UnavailableError(answer->Describe())
                      : ResourcesWithStatus(answer->body);
  if (!with_status.ok()) {
    LAHAR_LOG(1, "status") << "API discovery of " << group_version_path_ << ": " << with_status.status().message()
                           << " (status written to the status subresource meanwhile)";
    return discovered;
  }
  discovered->with_status = *std::move(with_status);
  discovered->answered = true;
  LAHAR_LOG(1, "status") << "API discovery of " << group_version_path_
                         << ": resources with a status subresource: " << Names(discovered->with_status)
                         << "; the others' status is written to the object itself";
  std::lock_guard<std::mutex> lock(mu_);
  ++discoveries_;
  if (current_ == nullptr) current_ = std::move(discovered);
  return current_;
}

void StatusPatcher::Forget(const std::shared_ptr<const Discovered>& seen) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_ == seen) current_.reset();
}

absl::StatusOr<HttpResult> StatusPatcher::SendPatch(std::string_view object_path, bool to_subresource,
                                                    std::string_view patch) {
  return send_("PATCH", to_subresource ? StrCat(object_path, kStatusSuffix) : std::string(object_path), patch,
               "application/merge-patch+json");
}

}  // namespace lahar
