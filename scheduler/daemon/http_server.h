// The daemon's small HTTP/1.1 server for /metrics, /healthz, /readyz and /debug/snapshot.
//
//   ASSIGN_OR_RETURN(auto server, HttpServer::Start(":8080", {{"/healthz", [](const HttpRequest&) {
//                      return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
//                    }}}));
//
// Connections are served asynchronously by a few threads, so a slow or idle client holds no
// thread and cannot block /healthz; only handlers run on those threads and should be quick.
#ifndef LAHAR_SCHEDULER_DAEMON_HTTP_SERVER_H_
#define LAHAR_SCHEDULER_DAEMON_HTTP_SERVER_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace lahar {

struct HttpRequest {
  std::string method;  // "GET" or "HEAD": handlers never see other methods
  std::string path;    // without the query: "/metrics"
  std::string query;   // after '?', undecoded: "a=1&b=2"; empty if none
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// Exact path -> handler. Other paths get 404; methods other than GET and HEAD get 405.
using HttpHandlers = std::map<std::string, HttpHandler, std::less<>>;

struct HttpServerOptions {
  int threads = 2;
  // A connection that sends no complete request for this long is closed; so is one whose
  // response cannot be written within it.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(30);
  // Larger requests (headers or body) get 413 and the connection is closed.
  size_t max_request_bytes = 64 * 1024;
  // Connections beyond this are closed as soon as they are accepted.
  int max_connections = 256;
};

class HttpServer {
 public:
  // Listens on `listen_address`, written as Kubernetes components take it: "host:port",
  // ":8080" for every interface, "[::1]:8080" for IPv6, port 0 for an ephemeral port; the host is
  // an IP address or "localhost". A malformed address is InvalidArgument; one that cannot be
  // bound (in use, not local) is Unavailable, or PermissionDenied for a privileged port.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(std::string_view listen_address,
                                                           HttpHandlers handlers,
                                                           HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the chosen one when the address asked for port 0).
  int port() const { return port_; }

  // Stops accepting, closes every connection and joins the threads; waits only for handlers
  // already running. Idempotent; must not be called from a handler.
  void Stop();

 private:
  struct Impl;
  HttpServer(std::unique_ptr<Impl> impl, int port);

  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_HTTP_SERVER_H_
