// The client and reflector against a fake apiserver: an in-process HTTP server that answers
// from handlers, so retries, pagination, watch streams and relists can be driven exactly.
#include "cache/kube/client.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "boost/asio/ip/tcp.hpp"
#include "cache/kube/cache_sink.h"
#include "cache/kube/rate_limiter.h"
#include "cache/kube/reflector.h"
#include "catch2/catch.hpp"
#include "scheduler/daemon/http_server.h"

namespace lahar {
namespace {

using namespace std::chrono_literals;

struct FakeApiserver {
  explicit FakeApiserver(HttpHandlers handlers) {
    absl::StatusOr<std::unique_ptr<HttpServer>> started = HttpServer::Start("127.0.0.1:0", std::move(handlers));
    REQUIRE(started.ok());
    server = *std::move(started);
  }
  std::unique_ptr<KubeClient> Client(double qps = 0, int burst = 1) {
    ClientConfig config;
    config.tls = false;
    config.host = "127.0.0.1";
    config.port = std::to_string(server->port());
    config.qps = qps;
    config.burst = burst;
    absl::StatusOr<std::unique_ptr<KubeClient>> client =
        KubeClient::Create(config, RetryPolicy{std::chrono::seconds(10), 4, std::chrono::milliseconds(1), std::chrono::milliseconds(5)});
    REQUIRE(client.ok());
    return *std::move(client);
  }
  std::unique_ptr<HttpServer> server;
};

HttpResponse Json(int status, std::string body) { return HttpResponse{status, "application/json", std::move(body)}; }

TEST_CASE("requests are retried on 5xx and succeed once the server recovers") {
  std::atomic<int> calls{0};
  FakeApiserver api({{"/api/v1/nodes", [&](const HttpRequest&) {
                        return ++calls <= 2 ? Json(503, R"({"message":"etcd is unhappy"})") : Json(200, R"({"items":[]})");
                      }}});
  auto client = api.Client();
  absl::StatusOr<HttpResult> result = client->Request("GET", "/api/v1/nodes");
  REQUIRE(result.ok());
  CHECK(result->status == 200);
  CHECK(calls == 3);  // two 503s, then the answer
}

TEST_CASE("after the last attempt the HTTP error is returned, with the Status message") {
  std::atomic<int> calls{0};
  FakeApiserver api({{"/x", [&](const HttpRequest&) {
                        ++calls;
                        return Json(500, R"({"kind":"Status","message":"boom"})");
                      }}});
  absl::StatusOr<HttpResult> result = api.Client()->Request("GET", "/x");
  REQUIRE(result.ok());
  CHECK(result->status == 500);
  CHECK(result->Describe() == "HTTP 500: boom");
  CHECK(calls == 4);  // RetryPolicy.max_attempts
}

TEST_CASE("client errors are not retried") {
  std::atomic<int> calls{0};
  FakeApiserver api({{"/x", [&](const HttpRequest&) {
                        ++calls;
                        return Json(404, R"({"message":"not found"})");
                      }}});
  absl::StatusOr<HttpResult> result = api.Client()->Request("GET", "/x");
  REQUIRE(result.ok());
  CHECK(result->status == 404);
  CHECK(calls == 1);
}

TEST_CASE("a 429 is throttling and retried, unless a PodDisruptionBudget refused an eviction") {
  std::atomic<int> throttled{0}, refused_by_message{0}, refused_by_cause{0};
  FakeApiserver api({{"/throttled", [&](const HttpRequest&) {
                        return ++throttled <= 1 ? Json(429, R"({"kind":"Status","message":"too many requests"})")
                                                : Json(201, "{}");
                      }},
                     {"/evict-message", [&](const HttpRequest&) {
                        ++refused_by_message;
                        return Json(429, R"({"kind":"Status","message":"Cannot evict pod as it would violate the pod's disruption budget."})");
                      }},
                     {"/evict-cause", [&](const HttpRequest&) {
                        ++refused_by_cause;
                        return Json(429, R"({"kind":"Status","message":"no","details":{"causes":[{"type":"DisruptionBudget"}]}})");
                      }}});
  auto client = api.Client();
  CHECK(client->Request("GET", "/throttled")->status == 201);
  CHECK(throttled == 2);
  CHECK(client->Request("GET", "/evict-message")->status == 429);
  CHECK(refused_by_message == 1);
  CHECK(client->Request("GET", "/evict-cause")->status == 429);
  CHECK(refused_by_cause == 1);
}

TEST_CASE("an unreachable apiserver is an Unavailable error, not a crash") {
  int port;
  {
    FakeApiserver api({});
    port = api.server->port();
  }  // stopped: nothing listens there now
  ClientConfig config;
  config.tls = false;
  config.host = "127.0.0.1";
  config.port = std::to_string(port);
  auto client = KubeClient::Create(config, RetryPolicy{std::chrono::seconds(10), 2, std::chrono::milliseconds(1), std::chrono::milliseconds(1)});
  REQUIRE(client.ok());
  absl::StatusOr<HttpResult> result = (*client)->Request("GET", "/api");
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsUnavailable(result.status()));
}

TEST_CASE("a request the server never answers times out and is retried") {
  // A listener that accepts and never answers.
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  std::vector<boost::asio::ip::tcp::socket> held;
  std::atomic<bool> done{false};
  std::thread accepter([&] {
    while (!done) {
      boost::system::error_code ec;
      acceptor.non_blocking(true);
      boost::asio::ip::tcp::socket s = acceptor.accept(ec);
      if (!ec) held.push_back(std::move(s));
      std::this_thread::sleep_for(5ms);
    }
  });
  ClientConfig config;
  config.tls = false;
  config.host = "127.0.0.1";
  config.port = std::to_string(acceptor.local_endpoint().port());
  auto client = KubeClient::Create(config, RetryPolicy{200ms, 2, 1ms, 1ms});
  REQUIRE(client.ok());
  auto started = std::chrono::steady_clock::now();
  absl::StatusOr<HttpResult> result = (*client)->Request("GET", "/api");
  auto took = std::chrono::steady_clock::now() - started;
  done = true;
  accepter.join();
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsDeadlineExceeded(result.status()));
  CHECK(took >= 400ms);  // two attempts of 200 ms
  CHECK(took < 5s);
}

TEST_CASE("kept-alive connections are reused across requests and threads") {
  std::atomic<int> calls{0};
  FakeApiserver api({{"/x", [&](const HttpRequest&) {
                        ++calls;
                        return Json(200, "{}");
                      }}});
  auto client = api.Client();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) REQUIRE(client->Request("GET", "/x")->status == 200);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(calls == 100);
}

TEST_CASE("the rate limiter lets a burst through, then spaces requests at 1/qps") {
  RateLimiter limiter(10, 2);  // 10 per second, burst 2
  auto t0 = RateLimiter::Clock::now();
  CHECK(limiter.Reserve(t0) == 0ms);
  CHECK(limiter.Reserve(t0) == 0ms);
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(limiter.Reserve(t0)) == 100ms);
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(limiter.Reserve(t0)) == 200ms);  // queued behind
  // A second later the bucket has refilled by 10 tokens but holds at most the burst.
  CHECK(limiter.Reserve(t0 + 1s) == 0ms);
  RateLimiter unlimited(0, 1);
  for (int i = 0; i < 100; ++i) CHECK(unlimited.Reserve(t0) == 0ms);
}

TEST_CASE("a stream hands over every line, also a last one without newline") {
  FakeApiserver api({{"/w", [](const HttpRequest&) { return Json(200, "{\"a\":1}\n\n{\"b\":2}\n{\"c\":3}"); }}});
  std::vector<std::string> lines;
  std::atomic<bool> stop{false};
  absl::Status status = api.Client()->Stream("/w", [&](std::string_view l) { lines.emplace_back(l); }, stop, 5s);
  CHECK(status.ok());
  CHECK(lines == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"});
}

TEST_CASE("a stream answered with an error status reports it") {
  FakeApiserver api({{"/w", [](const HttpRequest&) { return Json(410, R"({"message":"too old"})"); }}});
  std::atomic<bool> stop{false};
  int http_status = 0;
  absl::Status status = api.Client()->Stream("/w", [](std::string_view) {}, stop, 5s, &http_status);
  CHECK(absl::IsFailedPrecondition(status));
  CHECK(http_status == 410);
  CHECK(std::string(status.message()) == "HTTP 410: too old");
}

// Records what a reflector delivers.
class RecordingSink : public WatchSink {
 public:
  void Replace(const std::vector<const rapidjson::Value*>& objects) override {
    std::lock_guard<std::mutex> lock(mu);
    std::string names;
    for (const auto* o : objects) names += std::string((*o)["metadata"]["name"].GetString()) + ",";
    log.push_back("replace:" + names);
  }
  void Apply(WatchEventType type, const rapidjson::Value& object) override {
    std::lock_guard<std::mutex> lock(mu);
    const char* kind = type == WatchEventType::kAdded ? "added:" : type == WatchEventType::kModified ? "modified:" : "deleted:";
    log.push_back(kind + std::string(object["metadata"]["name"].GetString()));
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(mu);
    return log;
  }
  std::mutex mu;
  std::vector<std::string> log;
};

std::string NodeJson(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv + R"("}})";
}

TEST_CASE("reflector: paginated list, watch from the list's version, resume from bookmarks, relist on 410") {
  std::mutex mu;
  std::vector<std::string> queries;
  int lists = 0, watches = 0;
  FakeApiserver api({{"/api/v1/nodes", [&](const HttpRequest& request) {
    std::lock_guard<std::mutex> lock(mu);
    queries.push_back(request.query);
    if (request.query.find("watch=1") == std::string::npos) {
      ++lists;
      if (request.query.find("continue=") == std::string::npos) {
        return Json(200, R"({"metadata":{"resourceVersion":"10","continue":"page 2"},"items":[)" + NodeJson("a", "5") +
                             "," + NodeJson("b", "6") + "]}");
      }
      return Json(200, R"({"metadata":{"resourceVersion":"10"},"items":[)" + NodeJson("c", "7") + "]}");
    }
    ++watches;
    if (watches == 1) {
      return Json(200, R"({"type":"ADDED","object":)" + NodeJson("d", "11") + "}\n" +
                           R"({"type":"MODIFIED","object":)" + NodeJson("a", "12") + "}\n" +
                           R"({"type":"DELETED","object":)" + NodeJson("b", "13") + "}\n" +
                           R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"20"}}})" + "\n");
    }
    if (watches == 2) {
      return Json(200, R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version"}})");
    }
    return Json(200, "");  // nothing happens; the server ends the watch
  }}});
  auto client = api.Client();
  RecordingSink sink;
  ReflectorOptions options;
  options.page_size = 2;
  options.initial_backoff = 1ms;
  Reflector reflector(*client, "nodes", "/api/v1/nodes", sink, options);
  std::atomic<bool> stop{false};
  std::thread runner([&] { reflector.Run(stop); });
  for (int i = 0; i < 500 && sink.Log().size() < 5; ++i) std::this_thread::sleep_for(10ms);
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (watches >= 3) break;
    }
    std::this_thread::sleep_for(10ms);
  }
  stop = true;
  runner.join();

  std::vector<std::string> log = sink.Log();
  REQUIRE(log.size() >= 5);
  CHECK(log[0] == "replace:a,b,c,");
  CHECK(log[1] == "added:d");
  CHECK(log[2] == "modified:a");
  CHECK(log[3] == "deleted:b");
  CHECK(log[4] == "replace:a,b,c,");  // relisted after 410
  CHECK(reflector.synced());
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(queries.size() >= 6);
  CHECK(queries[0] == "limit=2");
  CHECK(queries[1] == "limit=2&continue=page%202");
  CHECK(queries[2].find("watch=1&allowWatchBookmarks=true&resourceVersion=10&") == 0);
  CHECK(queries[3].find("resourceVersion=20&") != std::string::npos);  // resumed from the bookmark
  CHECK(queries[4] == "limit=2");                                       // 410: list again
}

TEST_CASE("reflector of an optional resource: absent is empty and synced, installed later is picked up, deleted empties it") {
  std::mutex mu;
  bool installed = false;
  int lists = 0;
  FakeApiserver api({{"/apis/topology.volcano.sh/v1alpha1/hypernodes", [&](const HttpRequest& request) {
    std::lock_guard<std::mutex> lock(mu);
    if (!installed) return Json(404, R"({"kind":"Status","code":404,"message":"the server could not find the requested resource"})");
    if (request.query.find("watch=1") == std::string::npos) {
      ++lists;
      return Json(200, R"({"metadata":{"resourceVersion":"10"},"items":[)" + NodeJson("leaf-0", "9") + "]}");
    }
    installed = false;  // the CRD is deleted while watched: the watch ends, the next answers 404
    return Json(200, R"({"type":"ADDED","object":)" + NodeJson("leaf-1", "11") + "}\n");
  }}});
  auto client = api.Client();
  RecordingSink sink;
  ReflectorOptions options;
  options.optional = true;
  options.initial_backoff = 1ms;
  options.absent_recheck = 20ms;
  Reflector reflector(*client, "hypernodes", "/apis/topology.volcano.sh/v1alpha1/hypernodes", sink, options);
  std::atomic<bool> stop{false};
  std::thread runner([&] { reflector.Run(stop); });
  auto wait_for = [&](auto done) {
    for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  };
  wait_for([&] { return reflector.synced(); });
  CHECK(reflector.synced());  // the daemon does not wait for a CRD that is not installed
  CHECK(reflector.absent());
  CHECK(sink.Log() == std::vector<std::string>{"replace:"});
  std::this_thread::sleep_for(100ms);  // looked again a few times: still absent, the sink told once
  CHECK(sink.Log().size() == 1);

  {
    std::lock_guard<std::mutex> lock(mu);
    installed = true;
  }
  wait_for([&] { return sink.Log().size() >= 4; });
  stop = true;
  runner.join();
  CHECK(sink.Log() == std::vector<std::string>{"replace:", "replace:leaf-0,", "added:leaf-1", "replace:"});
  CHECK(reflector.absent());
}

TEST_CASE("cache sink: objects that do not decode are reported and the last good version stays") {
  ClusterCache cache;
  std::mutex mu;
  std::vector<InvalidObject> reported;
  CacheSink sink(ObjectKind::kNode, cache, mu, [&](const InvalidObject& bad) { reported.push_back(bad); });
  rapidjson::Document good, bad;
  good.Parse(R"({"metadata":{"name":"n1","resourceVersion":"1"},"status":{"allocatable":{"cpu":"4"}}})");
  bad.Parse(R"({"metadata":{"name":"n1","uid":"u1","resourceVersion":"2"},"status":{"allocatable":{"cpu":"1e999"}}})");
  sink.Replace({&good});
  sink.Apply(WatchEventType::kModified, bad);
  REQUIRE(reported.size() == 1);
  CHECK(reported[0].kind == ObjectKind::kNode);
  CHECK(reported[0].name == "n1");
  CHECK(reported[0].resource_version == "2");
  CHECK(reported[0].message.find("status.allocatable.cpu") != std::string::npos);
  REQUIRE(cache.FindNode("n1") != nullptr);
  CHECK(cache.FindNode("n1")->allocatable.Get(kCpu) == 4000);  // the good version

  // A relist without n1 deletes it; deletions need no decoding.
  sink.Replace({});
  CHECK(cache.FindNode("n1") == nullptr);
}

}  // namespace
}  // namespace lahar
