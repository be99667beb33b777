// A Kubernetes API client on Boost.Beast and OpenSSL: kept-alive connections shared by
// threads, a client-side rate limit, retries with backoff on 429 / 5xx / broken connections,
// and streaming reads for watches. Bodies are JSON text; decoding is the caller's.
#ifndef LAHAR_CACHE_KUBE_CLIENT_H_
#define LAHAR_CACHE_KUBE_CLIENT_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/kube/kubeconfig.h"
#include "cache/kube/rate_limiter.h"

namespace lahar {

struct HttpResult {
  int status = 0;
  std::string body;

  bool ok() const { return status >= 200 && status < 300; }
  // "HTTP 409: <the Status object's message>", for logs and errors.
  std::string Describe() const;
};

struct RetryPolicy {
  // How long one request may take from sending to the whole answer; then it is abandoned
  // (and retried like a broken connection).
  std::chrono::milliseconds request_timeout{60000};
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
};

class KubeClient {
 public:
  static absl::StatusOr<std::unique_ptr<KubeClient>> Create(ClientConfig config, RetryPolicy retry = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // One request, rate limited, retried on 429 (honouring Retry-After), 5xx and broken
  // connections. An error status means no HTTP answer arrived (or Shutdown); an HTTP error
  // answer is an ok StatusOr whose result is not ok().
  absl::StatusOr<HttpResult> Request(std::string_view method, std::string_view target, std::string_view body = {},
                                     std::string_view content_type = "application/json");

  // A long-running GET (a watch) on a connection of its own: calls `on_line` with every line
  // of the body as it arrives. Returns OK when the server ends the response, an error when
  // the connection breaks, the answer is not 200 (FailedPrecondition with the HTTP status and
  // body, kept in *http_status), nothing arrives for `idle_timeout`, or `stop` becomes true.
  absl::Status Stream(std::string_view target, const std::function<void(std::string_view)>& on_line,
                      const std::atomic<bool>& stop, std::chrono::seconds idle_timeout, int* http_status = nullptr);

  // Makes requests and streams in flight return promptly with an error; later calls fail.
  void Shutdown();

  const ClientConfig& config() const { return config_; }
  int64_t requests_sent() const { return requests_sent_.load(); }

  class Connection;  // one kept-alive HTTP/1.1 connection (defined in client.cc)

 private:
  struct TlsContext;
  KubeClient(ClientConfig config, RetryPolicy retry, std::unique_ptr<TlsContext> tls);
  absl::StatusOr<std::unique_ptr<Connection>> Connect();
  std::string Token();

  const ClientConfig config_;
  const RetryPolicy retry_;
  std::unique_ptr<TlsContext> tls_;
  RateLimiter limiter_;
  std::atomic<bool> shutdown_{false};
  std::atomic<int64_t> requests_sent_{0};

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Connection>> idle_;

  std::mutex token_mu_;
  std::string token_;
  std::chrono::steady_clock::time_point token_checked_;
};

// Percent-encodes a query parameter value (label selectors, continue tokens).
std::string UrlEncode(std::string_view value);

}  // namespace lahar

#endif  // LAHAR_CACHE_KUBE_CLIENT_H_
