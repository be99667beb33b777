#include "cache/kube/reflector.h"

#include <thread>

#include "api/interruptible_sleep.h"
#include "api/log.h"
#include "api/strings.h"
#include "cache/kube/json_fields.h"

namespace lahar {
namespace {

constexpr char kGoneMarker[] = "resource version gone: ";

}  // namespace

bool IsGone(const absl::Status& status) {
  return absl::IsFailedPrecondition(status) && status.message().find(kGoneMarker) != absl::string_view::npos;
}

Reflector::Reflector(KubeClient& client, std::string resource, std::string path, WatchSink& sink,
                     ReflectorOptions options)
    : client_(client), resource_(std::move(resource)), path_(std::move(path)), sink_(sink), options_(options) {}

absl::Status Reflector::List(const std::atomic<bool>& stop) {
  std::vector<rapidjson::Document> pages;
  std::string continue_token;
  std::string list_version;
  do {
    if (stop.load()) return absl::CancelledError("stopped");
    std::string target = StrCat(path_, "?limit=", options_.page_size);
    if (!continue_token.empty()) StrAppend(&target, "&continue=", UrlEncode(continue_token));
    absl::StatusOr<HttpResult> result = client_.Request("GET", target);
    if (!result.ok()) return result.status();
    if (result->status == 410 && !continue_token.empty()) {
      // The continue token expired mid-list: start over.
      pages.clear();
      continue_token.clear();
      continue;
    }
    if (options_.optional && (result->status == 404 || result->status == 403)) {
      return MarkAbsent(result->status, result->Describe());
    }
    if (!result->ok()) return absl::UnavailableError(StrCat("listing ", resource_, ": ", result->Describe()));
    rapidjson::Document& page = pages.emplace_back();
    page.Parse(result->body.data(), result->body.size());
    if (page.HasParseError() || !page.IsObject() || !page.HasMember("items") || !page["items"].IsArray()) {
      return absl::DataLossError(StrCat("listing ", resource_, ": the answer is not a list"));
    }
    continue_token.clear();
    if (page.HasMember("metadata") && page["metadata"].IsObject()) {
      const rapidjson::Value& meta = page["metadata"];
      if (meta.HasMember("continue") && meta["continue"].IsString()) continue_token = meta["continue"].GetString();
      if (meta.HasMember("resourceVersion") && meta["resourceVersion"].IsString()) {
        list_version = meta["resourceVersion"].GetString();
      }
    }
  } while (!continue_token.empty());

  std::vector<const rapidjson::Value*> objects;
  for (const rapidjson::Document& page : pages) {
    for (const rapidjson::Value& item : page["items"].GetArray()) objects.push_back(&item);
  }
  sink_.Replace(objects);
  resource_version_ = list_version;
  lists_.fetch_add(1);
  synced_.store(true);
  if (absent_.exchange(false)) LAHAR_LOG(0, "reflector") << resource_ << " is served now: watching them";
  LAHAR_LOG(1, "reflector") << "listed " << objects.size() << " " << resource_ << " at resourceVersion "
                            << resource_version_;
  return absl::OkStatus();
}

absl::Status Reflector::MarkAbsent(int http_status, std::string_view why) {
  if (!absent_.exchange(true)) {
    // Whatever the sink held went with the CRD (or is no longer ours to see).
    sink_.Replace({});
    resource_version_.clear();
    const int64_t ms = options_.absent_recheck.count();
    const std::string recheck = ms % 1000 == 0 ? StrCat(ms / 1000, "s") : StrCat(ms, "ms");
    if (http_status == 403) {
      LAHAR_WARN("reflector") << resource_ << ": not allowed to list them (" << why << "); going on without them, "
                              << "asking again every " << recheck << " (grant get, list and watch on " << resource_
                              << " to the scheduler's ClusterRole)";
    } else {
      LAHAR_LOG(0, "reflector") << resource_ << ": not served (" << why << "; is its CRD installed?); going on "
                                << "without them, looking again every " << recheck;
    }
  }
  synced_.store(true);
  return absl::NotFoundError(StrCat(resource_, ": ", why));
}

void Reflector::HandleLine(std::string_view line, absl::Status& watch_error) {
  rapidjson::Document event;
  event.Parse(line.data(), line.size());
  if (event.HasParseError() || !event.IsObject() || !event.HasMember("type") || !event["type"].IsString() ||
      !event.HasMember("object") || !event["object"].IsObject()) {
    LAHAR_WARN("reflector") << resource_ << ": skipping a watch event that is not JSON: " << line.substr(0, 200);
    return;
  }
  std::string_view type = event["type"].GetString();
  const rapidjson::Value& object = event["object"];
  if (type == "ERROR") {
    int code = object.HasMember("code") && object["code"].IsInt() ? object["code"].GetInt() : 0;
    std::string message = object.HasMember("message") && object["message"].IsString() ? object["message"].GetString() : "";
    if (code == 410) {
      watch_error = absl::FailedPreconditionError(StrCat(kGoneMarker, message));
    } else {
      watch_error = absl::UnavailableError(StrCat("watch error ", code, ": ", message));
    }
    return;
  }
  events_.fetch_add(1);
  std::string version = MetadataField(object, "resourceVersion");
  if (type == "BOOKMARK") {
    if (!version.empty()) resource_version_ = version;
    return;
  }
  WatchEventType kind;
  if (type == "ADDED") {
    kind = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    kind = WatchEventType::kModified;
  } else if (type == "DELETED") {
    kind = WatchEventType::kDeleted;
  } else {
    LAHAR_WARN("reflector") << resource_ << ": unknown watch event type " << type;
    return;
  }
  sink_.Apply(kind, object);
  if (!version.empty()) resource_version_ = version;
}

absl::Status Reflector::Watch(const std::atomic<bool>& stop) {
  std::string target = StrCat(path_, "?watch=1&allowWatchBookmarks=true&resourceVersion=", UrlEncode(resource_version_),
                              "&timeoutSeconds=", options_.watch_timeout.count());
  absl::Status watch_error;
  int http_status = 0;
  absl::Status status = client_.Stream(
      target,
      [&](std::string_view line) {
        if (watch_error.ok()) HandleLine(line, watch_error);
      },
      stop, options_.watch_timeout + std::chrono::seconds(30), &http_status);
  if (!watch_error.ok()) return watch_error;
  if (http_status == 410) return absl::FailedPreconditionError(StrCat(kGoneMarker, status.message()));
  if (options_.optional && (http_status == 404 || http_status == 403)) {
    return absl::NotFoundError(StrCat(resource_, " watch: ", status.message()));
  }
  return status;
}

void Reflector::Run(const std::atomic<bool>& stop) {
  std::chrono::milliseconds backoff = options_.initial_backoff;
  bool need_list = true;
  while (!stop.load()) {
    absl::Status status = need_list ? List(stop) : Watch(stop);
    if (stop.load() || absl::IsCancelled(status)) break;
    if (status.ok()) {
      backoff = options_.initial_backoff;
      need_list = false;  // after a list, or a watch the server closed on time: (re)watch
      continue;
    }
    if (options_.optional && absl::IsNotFound(status)) {
      if (need_list) {
        // Not served: look again later (a CRD installed meanwhile is picked up then).
        backoff = options_.initial_backoff;
        SleepUnlessStopped(options_.absent_recheck, stop);
      } else {
        // The watch found it gone (its CRD deleted): the list says what remains.
        LAHAR_LOG(1, "reflector") << status.message() << "; listing again";
        need_list = true;
        SleepUnlessStopped(backoff, stop);
        backoff = std::min(backoff * 2, options_.max_backoff);
      }
      continue;
    }
    if (IsGone(status)) {
      LAHAR_LOG(1, "reflector") << resource_ << ": " << status.message() << "; relisting";
      need_list = true;
      continue;
    }
    LAHAR_WARN("reflector") << resource_ << (need_list ? " list" : " watch") << " failed: " << status.message()
                            << "; retrying in " << backoff.count() << "ms";
    SleepUnlessStopped(backoff, stop);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace lahar
