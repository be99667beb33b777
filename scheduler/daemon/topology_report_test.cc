// HyperNodes as the daemon receives them (watch events into the cache) and the problems it
// tells: a HyperNode that does not decode is reported by name and skipped; a broken one is told
// once, not every session, and again only when it breaks anew.
#include "scheduler/daemon/topology_report.h"

#include <catch2/catch.hpp>
#include <mutex>

#include "cache/cluster_cache.h"
#include "cache/kube/cache_sink.h"
#include "rapidjson/document.h"

namespace lahar {
namespace {

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

std::string NodeJson(const std::string& name) {
  return R"({"metadata":{"name":")" + name + R"("},"status":{"allocatable":{"cpu":"4","pods":"110"}}})";
}

// A tier-1 HyperNode whose only member is the node regex `pattern`.
std::string LeafJson(const std::string& name, const std::string& pattern) {
  return R"({"apiVersion":"topology.volcano.sh/v1alpha1","kind":"HyperNode","metadata":{"name":")" + name +
         R"(","uid":"uid-)" + name + R"("},"spec":{"tier":1,"members":[{"type":"Node","selector":{"regexMatch":{"pattern":")" +
         pattern + R"("}}}]}})";
}

TEST_CASE("HyperNodes from the apiserver: undecodable ones skipped by name, broken ones told once") {
  ClusterCache cache;
  std::mutex mu;
  std::vector<InvalidObject> invalid;
  auto report = [&](const InvalidObject& bad) { invalid.push_back(bad); };
  CacheSink nodes(ObjectKind::kNode, cache, mu, report);
  CacheSink hypernodes(ObjectKind::kHyperNode, cache, mu, report);
  rapidjson::Document n0 = Json(NodeJson("n0")), n1 = Json(NodeJson("n1")), n2 = Json(NodeJson("n2"));
  nodes.Replace({&n0, &n1, &n2});

  TopologyProblemTracker tracker;
  CHECK(tracker.Update(cache.CurrentTopology()).broken.empty());  // no HyperNodes: no topology

  rapidjson::Document leaf = Json(LeafJson("leaf-a", "^n[01]$"));
  rapidjson::Document broken = Json(LeafJson("leaf-b", "^n["));
  rapidjson::Document undecodable = Json(
      R"({"metadata":{"name":"leaf-c","uid":"u-c"},"spec":{"tier":1,"members":[{"type":"Switch","selector":{"exactMatch":{"name":"n2"}}}]}})");
  hypernodes.Replace({&leaf, &broken, &undecodable});

  REQUIRE(invalid.size() == 1);
  CHECK(invalid[0].kind == ObjectKind::kHyperNode);
  CHECK(invalid[0].name == "leaf-c");
  CHECK(invalid[0].message.find("\"Switch\" is neither Node nor HyperNode") != std::string::npos);
  REQUIRE(cache.HyperNodes().size() == 2);  // leaf-c skipped

  TopologyChanges first = tracker.Update(cache.CurrentTopology());
  REQUIRE(first.broken.size() == 1);
  CHECK(first.broken[0].name == "leaf-b");
  CHECK(first.broken[0].why.find("regexMatch pattern \"^n[\" does not compile") != std::string::npos);
  CHECK(first.broken[0].problem == "HyperNode leaf-b: " + first.broken[0].why);
  CHECK(cache.CurrentTopology()->problems == std::vector<std::string>{first.broken[0].problem});

  // Every later session sees the same topology: nothing to tell.
  CHECK(tracker.Update(cache.CurrentTopology()).broken.empty());
  // A change elsewhere rebuilds the topology; leaf-b is as broken as before.
  rapidjson::Document leaf_wider = Json(LeafJson("leaf-a", "^n[012]$"));
  hypernodes.Apply(WatchEventType::kModified, leaf_wider);
  TopologyChanges unchanged = tracker.Update(cache.CurrentTopology());
  CHECK(unchanged.broken.empty());
  CHECK(unchanged.mended.empty());

  // Mended, then broken again: told both times.
  rapidjson::Document fixed = Json(LeafJson("leaf-b", "^n9$"));
  hypernodes.Apply(WatchEventType::kModified, fixed);
  TopologyChanges mended = tracker.Update(cache.CurrentTopology());
  CHECK(mended.broken.empty());
  CHECK(mended.mended == std::vector<std::string>{"leaf-b"});
  hypernodes.Apply(WatchEventType::kModified, broken);
  CHECK(tracker.Update(cache.CurrentTopology()).broken.size() == 1);

  // The CRD deleted (the reflector empties the sink): the topology is gone and so is the problem.
  hypernodes.Replace({});
  CHECK(cache.CurrentTopology() == nullptr);
  TopologyChanges gone = tracker.Update(cache.CurrentTopology());
  CHECK(gone.broken.empty());
  CHECK(gone.mended == std::vector<std::string>{"leaf-b"});
}

}  // namespace
}  // namespace lahar
