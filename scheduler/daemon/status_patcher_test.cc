#include "scheduler/daemon/status_patcher.h"

#include <string>
#include <vector>

#include "api/strings.h"
#include "catch2/catch.hpp"

namespace lahar {
namespace {

// GET /apis/scheduling.volcano.sh/v1beta1 as kube-apiserver answers it (trimmed verbs and
// hashes), for Volcano's CRDs (no podgroups/status) or Lahar's (both).
std::string Discovery(bool podgroups_status) {
  return StrCat(
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"scheduling.volcano.sh/v1beta1","resources":[)",
      R"({"name":"podgroups","singularName":"podgroup","namespaced":true,"kind":"PodGroup",)",
      R"("verbs":["delete","get","list","patch","update","watch"],"shortNames":["pg","podgroup-v1beta1"]},)",
      podgroups_status ? R"({"name":"podgroups/status","singularName":"","namespaced":true,"kind":"PodGroup",)"
                         R"("verbs":["get","patch","update"]},)"
                       : "",
      R"({"name":"queues","singularName":"queue","namespaced":false,"kind":"Queue","verbs":["get","list"],)"
      R"("shortNames":["q"]},)",
      R"({"name":"queues/status","singularName":"","namespaced":false,"kind":"Queue",)"
      R"("verbs":["get","patch","update"]}]})");
}

constexpr char kObject[] = "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/podgroups/job";
constexpr char kPatch[] = R"({"status":{"phase":"Running","conditions":[],"running":2}})";

// One PodGroup on an apiserver whose PodGroup CRD has a status subresource or not, answering
// as kube-apiserver does: .../status is a 404 without the subresource, and a write to the
// object keeps the old status with it.
struct FakeApiserver {
  bool podgroups_status = false;
  bool discovery_fails = false;
  bool discovery_lags = false;  // discovery shows the layout before podgroups_status changed
  bool object_exists = true;
  std::string status = R"({"phase":"Pending"})";
  std::vector<std::string> requests;

  StatusPatcher::RequestFn Send() {
    return [this](std::string_view method, std::string_view target, std::string_view body, std::string_view) {
      return Handle(method, target, body);
    };
  }
  absl::StatusOr<HttpResult> Handle(std::string_view method, std::string_view target, std::string_view body) {
    requests.push_back(StrCat(method, " ", target));
    if (method == "GET" && target == "/apis/scheduling.volcano.sh/v1beta1") {
      if (discovery_fails) return HttpResult{503, R"({"message":"etcd is unhappy"})"};
      return HttpResult{200, Discovery(podgroups_status != discovery_lags)};
    }
    const bool to_status = target == StrCat(kObject, "/status");
    if (method != "PATCH" || (!to_status && target != kObject)) return HttpResult{400, "{}"};
    if (!object_exists || (to_status && !podgroups_status)) return HttpResult{404, R"({"message":"not found"})"};
    // The fake's objects hold exactly the status last written.
    if (to_status || !podgroups_status) status = std::string(body).substr(10, body.size() - 11);
    return HttpResult{200, StrCat(R"({"metadata":{"name":"job"},"spec":{"minMember":2},"status":)", status, "}")};
  }
};

TEST_CASE("discovery: the resources listed with /status") {
  auto volcano = ResourcesWithStatus(Discovery(false));
  REQUIRE(volcano.ok());
  CHECK(*volcano == std::set<std::string, std::less<>>{"queues"});
  auto lahar = ResourcesWithStatus(Discovery(true));
  REQUIRE(lahar.ok());
  CHECK(*lahar == std::set<std::string, std::less<>>{"podgroups", "queues"});
  // Other subresources (scale, binding) and nested names are not status.
  auto other =
      ResourcesWithStatus(R"({"resources":[{"name":"jobs/scale"},{"name":"a/b/status"},{"name":"/status"},{"x":1}]})");
  REQUIRE(other.ok());
  CHECK(other->empty());
  CHECK(ResourcesWithStatus("<html>").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ResourcesWithStatus(R"({"kind":"Status"})").status().message().find("APIResourceList") != std::string::npos);
}

TEST_CASE("a merge patch is applied when its fields are there and its nulls are not") {
  CHECK(MergePatchApplied(kPatch,
                          R"({"spec":{},"status":{"phase":"Running","conditions":[],"running":2,"failed":0}})"));
  CHECK_FALSE(MergePatchApplied(kPatch, R"({"spec":{},"status":{"phase":"Pending","conditions":[],"running":2}})"));
  CHECK_FALSE(MergePatchApplied(kPatch, R"({"spec":{}})"));
  CHECK_FALSE(
      MergePatchApplied(kPatch, R"({"status":{"phase":"Running","conditions":[{"type":"x"}],"running":2}})"));
  // Queue allocation: a resource set to null must be gone; others' fields may stay.
  const char* queue = R"({"status":{"allocated":{"cpu":"2","nvidia.com/gpu":null}}})";
  CHECK(MergePatchApplied(queue, R"({"status":{"allocated":{"cpu":"2"},"state":"Open"}})"));
  CHECK_FALSE(MergePatchApplied(queue, R"({"status":{"allocated":{"cpu":"2","nvidia.com/gpu":"1"}}})"));
  CHECK_FALSE(MergePatchApplied(kPatch, "not json"));
}

TEST_CASE("on Volcano's PodGroup CRD status is written to the object itself, discovered once") {
  FakeApiserver api;
  StatusPatcher patcher(api.Send(), "/apis/scheduling.volcano.sh/v1beta1");
  auto r = patcher.Patch("podgroups", kObject, kPatch);
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(api.status == R"({"phase":"Running","conditions":[],"running":2})");
  REQUIRE(patcher.Patch("podgroups", kObject, kPatch).ok());
  CHECK(patcher.HasStatusSubresource("queues"));
  CHECK(api.requests == std::vector<std::string>{"GET /apis/scheduling.volcano.sh/v1beta1", StrCat("PATCH ", kObject),
                                                 StrCat("PATCH ", kObject)});
  CHECK(patcher.discoveries() == 1);
}

TEST_CASE("on Lahar's CRD status is written to the status subresource") {
  FakeApiserver api;
  api.podgroups_status = true;
  StatusPatcher patcher(api.Send(), "/apis/scheduling.volcano.sh/v1beta1");
  REQUIRE(patcher.Patch("podgroups", kObject, kPatch).ok());
  CHECK(api.requests.back() == StrCat("PATCH ", kObject, "/status"));
  CHECK(api.status == R"({"phase":"Running","conditions":[],"running":2})");
}

TEST_CASE("a CRD replaced under the daemon: the next write finds out and goes the other way") {
  FakeApiserver api;
  api.podgroups_status = true;
  StatusPatcher patcher(api.Send(), "/apis/scheduling.volcano.sh/v1beta1");
  REQUIRE(patcher.Patch("podgroups", kObject, kPatch).ok());

  SECTION("Lahar's CRD replaced by Volcano's: a 404 from .../status") {
    api.podgroups_status = false;
    auto r = patcher.Patch("podgroups", kObject, R"({"status":{"phase":"Completed"}})");
    REQUIRE(r.ok());
    CHECK(r->status == 200);
    CHECK(api.status == R"({"phase":"Completed"})");
    CHECK(std::vector<std::string>(api.requests.end() - 3, api.requests.end()) ==
          std::vector<std::string>{StrCat("PATCH ", kObject, "/status"), "GET /apis/scheduling.volcano.sh/v1beta1",
                                   StrCat("PATCH ", kObject)});
    CHECK(patcher.discoveries() == 2);
  }
  SECTION("Volcano's CRD replaced by Lahar's: the write to the object left status as it was") {
    api.podgroups_status = false;
    REQUIRE(patcher.Patch("podgroups", kObject, R"({"status":{"phase":"Inqueue"}})").ok());  // 404, rediscovered
    api.podgroups_status = true;
    auto r = patcher.Patch("podgroups", kObject, R"({"status":{"phase":"Completed"}})");
    REQUIRE(r.ok());
    CHECK(r->status == 200);
    CHECK(api.status == R"({"phase":"Completed"})");
    CHECK(api.requests.back() == StrCat("PATCH ", kObject, "/status"));
    CHECK(patcher.discoveries() == 3);
  }
}

TEST_CASE("status dropped while discovery still shows no subresource is an error to retry later") {
  FakeApiserver api;
  StatusPatcher patcher(api.Send(), "/apis/scheduling.volcano.sh/v1beta1");
  REQUIRE(patcher.Patch("podgroups", kObject, kPatch).ok());
  // The CRD gained the subresource; discovery does not show it yet.
  api.podgroups_status = true;
  api.discovery_lags = true;
  auto r = patcher.Patch("podgroups", kObject, R"({"status":{"phase":"Completed"}})");
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);
  CHECK(r.status().message().find("kept the status as it was") != std::string::npos);
  CHECK(patcher.discoveries() == 2);
  api.discovery_lags = false;  // caught up: the next write asks again and goes to .../status
  REQUIRE(patcher.Patch("podgroups", kObject, R"({"status":{"phase":"Completed"}})").ok());
  CHECK(api.status == R"({"phase":"Completed"})");
  CHECK(api.requests.back() == StrCat("PATCH ", kObject, "/status"));
  CHECK(patcher.discoveries() == 3);
}

TEST_CASE("a 404 for a PodGroup that is gone is returned after one more discovery") {
  FakeApiserver api;
  api.podgroups_status = true;
  api.object_exists = false;
  StatusPatcher patcher(api.Send(), "/apis/scheduling.volcano.sh/v1beta1");
  auto r = patcher.Patch("podgroups", kObject, kPatch);
  REQUIRE(r.ok());
  CHECK(r->status == 404);
  CHECK(patcher.discoveries() == 2);
  CHECK(api.requests.size() == 3);  // discovery, PATCH .../status, discovery: not written twice
}

TEST_CASE("an unanswered discovery presumes the status subresource and is asked again") {
  FakeApiserver api;
  api.podgroups_status = true;
  api.discovery_fails = true;
  StatusPatcher patcher(api.Send(), "/apis/scheduling.volcano.sh/v1beta1");
  REQUIRE(patcher.Patch("podgroups", kObject, kPatch).ok());
  CHECK(api.requests.back() == StrCat("PATCH ", kObject, "/status"));
  CHECK(patcher.discoveries() == 0);
  api.discovery_fails = false;
  CHECK(patcher.HasStatusSubresource("podgroups"));
  CHECK(patcher.discoveries() == 1);
}

}  // namespace
}  // namespace lahar
