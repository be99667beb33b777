#include "scheduler/daemon/http_server.h"

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "scheduler/daemon/metrics.h"

namespace lahar {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using Response = http::response<http::string_body>;

// A blocking HTTP client over one connection. Every step runs asynchronously with a 5 s
// deadline, so a misbehaving server fails the test instead of hanging it.
class TestClient {
 public:
  explicit TestClient(int port) : stream_(ioc_) {
    stream_.expires_after(std::chrono::seconds(5));
    stream_.async_connect(tcp::endpoint(net::ip::address_v4::loopback(), port),
                          [this](beast::error_code ec) { ec_ = ec; });
    Run();
    REQUIRE_FALSE(ec_);
  }

  Response Get(const std::string& target, http::verb method = http::verb::get) {
    http::request<http::string_body> request(method, target, 11);
    request.set(http::field::host, "localhost");
    request.prepare_payload();
    stream_.expires_after(std::chrono::seconds(5));
    http::async_write(stream_, request, [this](beast::error_code ec, size_t) { ec_ = ec; });
    Run();
    REQUIRE_FALSE(ec_);
    return Read(method == http::verb::head);
  }

  void WriteRaw(const std::string& bytes) {
    stream_.expires_after(std::chrono::seconds(5));
    net::async_write(stream_, net::buffer(bytes),
                     [this](beast::error_code ec, size_t) { ec_ = ec; });
    Run();
    REQUIRE_FALSE(ec_);
  }

  Response Read(bool head = false) {
    http::response_parser<http::string_body> parser;
    parser.skip(head);  // a response to HEAD has Content-Length but no body
    stream_.expires_after(std::chrono::seconds(5));
    http::async_read(stream_, buffer_, parser, [this](beast::error_code ec, size_t) { ec_ = ec; });
    Run();
    REQUIRE_FALSE(ec_);
    return parser.release();
  }

  // Waits for the server to close the connection; false if it is still open after 5 s.
  bool WaitClosed() {
    char byte;
    stream_.expires_after(std::chrono::seconds(5));
    stream_.async_read_some(net::buffer(&byte, 1),
                            [this](beast::error_code ec, size_t) { ec_ = ec; });
    Run();
    return ec_ == net::error::eof || ec_ == net::error::connection_reset;
  }

 private:
  void Run() {
    ioc_.restart();
    ioc_.run();
  }

  net::io_context ioc_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  beast::error_code ec_;
};

HttpResponse Text(std::string body) { return {200, "text/plain; charset=utf-8", std::move(body)}; }

HttpHandlers Healthz() {
  return {{"/healthz", [](const HttpRequest&) { return Text("ok\n"); }}};
}

std::unique_ptr<HttpServer> StartServer(HttpHandlers handlers, HttpServerOptions options = {}) {
  auto server = HttpServer::Start("127.0.0.1:0", std::move(handlers), options);
  REQUIRE(server.ok());
  REQUIRE((*server)->port() > 0);
  return *std::move(server);
}

TEST_CASE("GET /metrics is served over TCP") {
  MetricsRegistry registry;
  registry.Counter("lahar_schedule_attempts_total", "Attempts.", {"result"}).Add({"scheduled"}, 2);
  auto server = StartServer({{"/metrics", [&](const HttpRequest&) {
                                return HttpResponse{200, std::string(kPrometheusContentType),
                                                    registry.Render()};
                              }}});
  TestClient client(server->port());
  Response response = client.Get("/metrics");
  CHECK(response.result_int() == 200);
  CHECK(response[http::field::content_type] == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(response.body() == registry.Render());
  CHECK(response.body().find("lahar_schedule_attempts_total{result=\"scheduled\"} 2\n") !=
        std::string::npos);
}

TEST_CASE("handlers get the path and query apart; HEAD gets headers only") {
  auto server = StartServer({{"/echo", [](const HttpRequest& r) {
                                return Text(r.method + " " + r.path + " " + r.query);
                              }}});
  TestClient client(server->port());
  CHECK(client.Get("/echo?a=1&b=2").body() == "GET /echo a=1&b=2");
  CHECK(client.Get("/echo").body() == "GET /echo ");
  Response head = client.Get("/echo?x", http::verb::head);
  CHECK(head.result_int() == 200);
  CHECK(head[http::field::content_length] == "12");  // "HEAD /echo x", not sent
  CHECK(head.body().empty());
  CHECK(client.Get("/echo").result_int() == 200);  // the connection is still in step
}

TEST_CASE("unknown paths get 404 and other methods 405") {
  int calls = 0;
  auto server = StartServer({{"/healthz", [&](const HttpRequest&) {
                                ++calls;
                                return Text("ok\n");
                              }}});
  TestClient client(server->port());
  Response missing = client.Get("/nope");
  CHECK(missing.result_int() == 404);
  CHECK(missing.body() == "404 page not found\n");
  CHECK(client.Get("/healthz/").result_int() == 404);  // exact paths only
  Response post = client.Get("/healthz", http::verb::post);
  CHECK(post.result_int() == 405);
  CHECK(post[http::field::allow] == "GET, HEAD");
  CHECK(client.Get("/healthz", http::verb::delete_).result_int() == 405);
  CHECK(calls == 0);
}

TEST_CASE("keep-alive serves several requests on one connection") {
  int calls = 0;
  auto server = StartServer({{"/healthz", [&](const HttpRequest&) {
                                ++calls;
                                return Text("ok\n");
                              }}});
  TestClient client(server->port());
  Response first = client.Get("/healthz");
  CHECK(first.keep_alive());
  CHECK(first.body() == "ok\n");
  CHECK(client.Get("/healthz").body() == "ok\n");
  // Two pipelined requests in one write are answered in order.
  client.WriteRaw("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(client.Read().result_int() == 200);
  CHECK(client.Read().result_int() == 404);
  CHECK(calls == 3);
}

TEST_CASE("Connection: close and HTTP/1.0 close after the response") {
  auto server = StartServer(Healthz());
  {
    TestClient client(server->port());
    client.WriteRaw("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(client.Read().body() == "ok\n");
    CHECK(client.WaitClosed());
  }
  {
    TestClient client(server->port());
    client.WriteRaw("GET /healthz HTTP/1.0\r\n\r\n");
    CHECK(client.Read().body() == "ok\n");
    CHECK(client.WaitClosed());
  }
}

TEST_CASE("a throwing handler or a bad status gives 500") {
  auto server = StartServer({
      {"/throw", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); }},
      {"/bad", [](const HttpRequest&) { return HttpResponse{7, "text/plain", ""}; }},
  });
  TestClient client(server->port());
  CHECK(client.Get("/throw").result_int() == 500);
  CHECK(client.Get("/bad").result_int() == 500);
}

TEST_CASE("bad listen addresses are errors, not exceptions") {
  for (const char* address : {"abc", "", ":", ":99999", ":-1", ":80a", "127.0.0.1:", "1.2.3:80",
                              "300.1.1.1:80", "::1:80", "[::1:80", "host.example:80"}) {
    INFO('"' << address << '"');
    auto server = HttpServer::Start(address, {});
    REQUIRE_FALSE(server.ok());
    CHECK(absl::IsInvalidArgument(server.status()));
    CHECK_THAT(std::string(server.status().message()),
               Catch::Contains(std::string("\"") + address + "\""));
  }

  auto first = StartServer({});
  auto taken = HttpServer::Start("127.0.0.1:" + std::to_string(first->port()), {});
  REQUIRE_FALSE(taken.ok());
  CHECK(absl::IsUnavailable(taken.status()));
  CHECK_THAT(std::string(taken.status().message()), Catch::Contains("in use"));

  // 192.0.2.1 (TEST-NET-1) is not an address of this machine.
  auto foreign = HttpServer::Start("192.0.2.1:0", {});
  REQUIRE_FALSE(foreign.ok());
  CHECK(absl::IsUnavailable(foreign.status()));
}

TEST_CASE("all interfaces, localhost and IPv6 forms listen") {
  for (const char* address : {":0", "localhost:0", "0.0.0.0:0"}) {
    INFO(address);
    auto server = HttpServer::Start(address, Healthz());
    REQUIRE(server.ok());
    TestClient client((*server)->port());  // over 127.0.0.1
    CHECK(client.Get("/healthz").body() == "ok\n");
  }
  // IPv6 may be disabled on the machine: then only the error kind is checked.
  auto v6 = HttpServer::Start("[::1]:0", {});
  if (!v6.ok()) CHECK(absl::IsUnavailable(v6.status()));
}

TEST_CASE("Stop returns promptly while a client holds an idle connection") {
  auto server = StartServer(Healthz());
  TestClient idle(server->port());
  CHECK(idle.Get("/healthz").body() == "ok\n");
  TestClient silent(server->port());  // connected, never sends anything

  const Clock::time_point start = Clock::now();
  server->Stop();
  CHECK(Clock::now() - start < std::chrono::seconds(1));
  CHECK(idle.WaitClosed());
  CHECK(silent.WaitClosed());
  server->Stop();  // idempotent
  CHECK(server->port() > 0);
}

TEST_CASE("idle connections are closed after the timeout") {
  HttpServerOptions options;
  options.idle_timeout = std::chrono::milliseconds(200);
  auto server = StartServer(Healthz(), options);
  TestClient client(server->port());
  CHECK(client.Get("/healthz").body() == "ok\n");
  const Clock::time_point start = Clock::now();
  CHECK(client.WaitClosed());
  CHECK(Clock::now() - start < std::chrono::seconds(3));

  // A client trickling a request never completes it either.
  TestClient slow(server->port());
  slow.WriteRaw("GET /healthz HTTP/1.1\r\n");
  CHECK(slow.WaitClosed());
}

TEST_CASE("a slow connection does not block others") {
  auto server = StartServer(Healthz());
  TestClient slow(server->port());
  slow.WriteRaw("GET /healthz HTTP/1.1\r\nHost: x\r\n");  // headers never finished
  for (int i = 0; i < 5; ++i) {
    TestClient client(server->port());
    CHECK(client.Get("/healthz").body() == "ok\n");
  }
}

TEST_CASE("garbage and oversized requests get 400 or 413 and the server goes on") {
  auto server = StartServer(Healthz());
  {
    TestClient client(server->port());
    client.WriteRaw(std::string("\x00\xff\x16\x03 garbage\r\n\r\n", 16));
    Response response = client.Read();
    CHECK(response.result_int() == 400);
    CHECK_FALSE(response.keep_alive());
    CHECK(client.WaitClosed());
  }
  {
    TestClient client(server->port());
    client.WriteRaw("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n");
    CHECK(client.Read().result_int() == 400);
  }
  {
    TestClient client(server->port());  // a body announced beyond the 64 KiB cap
    client.WriteRaw("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n");
    CHECK(client.Read().result_int() == 413);
    CHECK(client.WaitClosed());
  }
  {
    TestClient client(server->port());  // headers beyond the cap
    client.WriteRaw("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70 * 1024, 'a') +
                    "\r\n\r\n");
    CHECK(client.Read().result_int() == 413);
  }
  TestClient client(server->port());
  CHECK(client.Get("/healthz").body() == "ok\n");
}

TEST_CASE("connections beyond the cap are closed at once") {
  HttpServerOptions options;
  options.max_connections = 2;
  auto server = StartServer(Healthz(), options);
  TestClient a(server->port());
  TestClient b(server->port());
  CHECK(a.Get("/healthz").body() == "ok\n");
  CHECK(b.Get("/healthz").body() == "ok\n");
  TestClient c(server->port());
  CHECK(c.WaitClosed());
}

}  // namespace
}  // namespace lahar
