#include "cache/kube/client.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "api/log.h"
#include "api/strings.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/asio/ssl/host_name_verification.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/ssl.hpp"
#include "cache/kube/json_fields.h"
#include "rapidjson/document.h"

namespace lahar {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr size_t kMaxBodyBytes = size_t{1} << 30;

bool IsIpLiteral(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

beast::string_view ToBeast(std::string_view s) { return beast::string_view(s.data(), s.size()); }

bool Retriable(int status) { return status == 429 || status == 500 || status == 502 || status == 503 || status == 504; }

// The eviction subresource answers 429 when a PodDisruptionBudget forbids the eviction: that
// is a refusal (the budget will not change in a second), not throttling, so it is not retried.
// Its Status says so in its message ("... would violate the pod's disruption budget.") and,
// unless the budget's status lags, in a DisruptionBudget cause.
bool DisruptionBudgetRefusal(const HttpResult& result) {
  if (result.status != 429) return false;
  rapidjson::Document doc;
  doc.Parse(result.body.data(), result.body.size());
  if (doc.HasParseError()) return false;
  if (StringField(doc, "message").find("disruption budget") != std::string::npos) return true;
  const rapidjson::Value& details = ObjectField(doc, "details");
  auto causes = details.FindMember("causes");
  if (causes == details.MemberEnd() || !causes->value.IsArray()) return false;
  for (const auto& cause : causes->value.GetArray()) {
    if (StringField(cause, "type") == "DisruptionBudget") return true;
  }
  return false;
}

}  // namespace

std::string HttpResult::Describe() const {
  std::string message;
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("message") && doc["message"].IsString()) {
    message = doc["message"].GetString();
  } else {
    message = body.substr(0, 200);
    // A plain-text answer ("404 page not found\n") ends in a newline that would split log lines.
    absl::StripTrailingAsciiWhitespace(&message);
  }
  return StrCat("HTTP ", status, ": ", message);
}

std::string UrlEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

struct KubeClient::TlsContext {
  asio::ssl::context context{asio::ssl::context::tls_client};
};

// One HTTP/1.1 connection, plain or TLS. Every operation is asynchronous underneath so that it
// has a deadline and can be cancelled (by Shutdown or a watch's stop flag); callers see a
// blocking API.
class KubeClient::Connection {
 public:
  Connection(const ClientConfig& config, asio::ssl::context* tls, const std::atomic<bool>& shutdown)
      : config_(config), shutdown_(shutdown) {
    if (tls != nullptr) {
      tls_stream_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc_, *tls);
    } else {
      tcp_stream_ = std::make_unique<beast::tcp_stream>(ioc_);
    }
  }

  absl::Status Connect() {
    tcp::resolver resolver(ioc_);
    beast::error_code ec;
    auto endpoints = resolver.resolve(config_.host, config_.port, ec);
    if (ec) return absl::UnavailableError(StrCat("resolving ", config_.host, ": ", ec.message()));
    absl::Status status = Await("connecting", kConnectTimeout, nullptr, [&](auto handler) {
      lowest().async_connect(endpoints, handler);
    });
    if (!status.ok()) return status;
    if (tls_stream_ != nullptr) {
      SSL* ssl = tls_stream_->native_handle();
      if (!IsIpLiteral(config_.host)) SSL_set_tlsext_host_name(ssl, config_.host.c_str());
      if (!config_.insecure_skip_tls_verify) {
        tls_stream_->set_verify_mode(asio::ssl::verify_peer);
        tls_stream_->set_verify_callback(asio::ssl::host_name_verification(config_.host));
      } else {
        tls_stream_->set_verify_mode(asio::ssl::verify_none);
      }
      status = Await("TLS handshake", kConnectTimeout, nullptr, [&](auto handler) {
        tls_stream_->async_handshake(asio::ssl::stream_base::client, handler);
      });
    }
    return status;
  }

  template <typename Request>
  absl::Status Write(Request& request, Clock::duration timeout, const std::atomic<bool>* stop) {
    return WithStream([&](auto& stream) {
      return Await("sending request", timeout, stop, [&](auto handler) {
        http::async_write(stream, request, handler);
      });
    });
  }

  template <typename Parser>
  absl::Status ReadHeader(Parser& parser, Clock::duration timeout, const std::atomic<bool>* stop) {
    return WithStream([&](auto& stream) {
      return Await("reading response", timeout, stop, [&](auto handler) {
        http::async_read_header(stream, buffer_, parser, handler);
      });
    });
  }

  // Returns as soon as some of the body has arrived (watch events must not wait for a full
  // buffer).
  template <typename Parser>
  absl::Status ReadSome(Parser& parser, Clock::duration timeout, const std::atomic<bool>* stop) {
    return WithStream([&](auto& stream) {
      return Await("reading response", timeout, stop, [&](auto handler) {
        http::async_read_some(stream, buffer_, parser, handler);
      });
    });
  }

  template <typename Parser>
  absl::Status Read(Parser& parser, Clock::duration timeout, const std::atomic<bool>* stop) {
    return WithStream([&](auto& stream) {
      return Await("reading response", timeout, stop, [&](auto handler) {
        http::async_read(stream, buffer_, parser, handler);
      });
    });
  }

 private:
  beast::tcp_stream& lowest() {
    return tls_stream_ != nullptr ? beast::get_lowest_layer(*tls_stream_) : *tcp_stream_;
  }

  template <typename F>
  absl::Status WithStream(F f) {
    return tls_stream_ != nullptr ? f(*tls_stream_) : f(*tcp_stream_);
  }

  // Starts one asynchronous operation and runs the io_context until it completes, the
  // deadline passes (the stream closes) or `stop` / shutdown asks to give up.
  template <typename Start>
  absl::Status Await(std::string_view what, Clock::duration timeout, const std::atomic<bool>* stop, Start start) {
    beast::error_code result;
    bool done = false;
    lowest().expires_after(timeout);
    start([&](beast::error_code ec, auto&&...) {
      result = ec;
      done = true;
    });
    ioc_.restart();
    bool cancelled = false;
    while (!done) {
      ioc_.run_for(std::chrono::milliseconds(100));
      if (!done && !cancelled && (shutdown_.load() || (stop != nullptr && stop->load()))) {
        lowest().cancel();
        cancelled = true;
      }
    }
    // A body larger than the buffer we offered is not an error for streamed reads.
    if (result == http::error::need_buffer) return absl::OkStatus();
    if (cancelled) return absl::CancelledError(StrCat(what, ": cancelled"));
    if (result == beast::error::timeout) return absl::DeadlineExceededError(StrCat(what, ": timed out"));
    if (result) return absl::UnavailableError(StrCat(what, ": ", result.message()));
    return absl::OkStatus();
  }

  const ClientConfig& config_;
  const std::atomic<bool>& shutdown_;
  asio::io_context ioc_{1};
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls_stream_;
  std::unique_ptr<beast::tcp_stream> tcp_stream_;
  beast::flat_buffer buffer_;
};

absl::StatusOr<std::unique_ptr<KubeClient>> KubeClient::Create(ClientConfig config, RetryPolicy retry) {
  if (config.host.empty()) return absl::InvalidArgumentError("no apiserver host configured");
  std::unique_ptr<TlsContext> tls;
  if (config.tls) {
    tls = std::make_unique<TlsContext>();
    beast::error_code ec;
    tls->context.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                             asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                             asio::ssl::context::no_tlsv1_1);
    if (!config.ca_pem.empty()) {
      tls->context.add_certificate_authority(asio::buffer(config.ca_pem), ec);
      if (ec) return absl::InvalidArgumentError(StrCat("certificate authority: ", ec.message()));
    } else {
      tls->context.set_default_verify_paths(ec);
      if (ec) return absl::InvalidArgumentError(StrCat("system trust store: ", ec.message()));
    }
    if (!config.client_cert_pem.empty()) {
      tls->context.use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
      if (ec) return absl::InvalidArgumentError(StrCat("client certificate: ", ec.message()));
      tls->context.use_private_key(asio::buffer(config.client_key_pem), asio::ssl::context::pem, ec);
      if (ec) return absl::InvalidArgumentError(StrCat("client key: ", ec.message()));
    }
  }
  return std::unique_ptr<KubeClient>(new KubeClient(std::move(config), retry, std::move(tls)));
}

KubeClient::KubeClient(ClientConfig config, RetryPolicy retry, std::unique_ptr<TlsContext> tls)
    : config_(std::move(config)),
      retry_(retry),
      tls_(std::move(tls)),
      limiter_(config_.qps, config_.burst),
      token_(config_.bearer_token),
      token_checked_(Clock::now()) {}

KubeClient::~KubeClient() = default;

void KubeClient::Shutdown() { shutdown_.store(true); }

std::string KubeClient::Token() {
  std::lock_guard<std::mutex> lock(token_mu_);
  // Projected service-account tokens rotate; re-read the file at most once a minute.
  if (!config_.token_file.empty() && Clock::now() - token_checked_ > std::chrono::minutes(1)) {
    token_checked_ = Clock::now();
    absl::StatusOr<std::string> text = ReadFileToString(config_.token_file);
    if (text.ok()) {
      absl::StripTrailingAsciiWhitespace(&*text);
      if (!text->empty()) token_ = *std::move(text);
    }
  }
  return token_;
}

absl::StatusOr<std::unique_ptr<KubeClient::Connection>> KubeClient::Connect() {
  auto connection = std::make_unique<Connection>(config_, tls_ ? &tls_->context : nullptr, shutdown_);
  absl::Status status = connection->Connect();
  if (!status.ok()) return status;
  return connection;
}

namespace {

http::request<http::string_body> MakeRequest(http::verb verb, std::string_view target, const ClientConfig& config,
                                             const std::string& token) {
  http::request<http::string_body> request(verb, ToBeast(target), 11);
  request.set(http::field::host, config.host);
  request.set(http::field::user_agent, "lahar-scheduler/0.1");
  request.set(http::field::accept, "application/json");
  if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
  request.keep_alive(true);
  return request;
}

}  // namespace

absl::StatusOr<HttpResult> KubeClient::Request(std::string_view method, std::string_view target, std::string_view body,
                                               std::string_view content_type) {
  http::verb verb = http::string_to_verb(beast::string_view(method.data(), method.size()));
  if (verb == http::verb::unknown) return absl::InvalidArgumentError(StrCat("unknown HTTP method ", method));
  std::chrono::milliseconds backoff = retry_.initial_backoff;
  absl::Status last_error = absl::UnavailableError("no attempt made");
  for (int attempt = 1;; ++attempt) {
    if (shutdown_.load()) return absl::CancelledError("client shut down");
    limiter_.Wait();
    http::request<http::string_body> request = MakeRequest(verb, target, config_, Token());
    if (!body.empty() || verb == http::verb::post || verb == http::verb::put || verb == http::verb::patch) {
      request.set(http::field::content_type, ToBeast(content_type));
      request.body().assign(body.data(), body.size());
    }
    request.prepare_payload();

    // A kept-alive connection the server has meanwhile closed fails on first use: that costs
    // a fresh connection, not an attempt.
    std::unique_ptr<Connection> connection;
    bool reused = false;
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      if (!idle_.empty()) {
        connection = std::move(idle_.back());
        idle_.pop_back();
        reused = true;
      }
    }
    absl::Status status;
    std::optional<http::response_parser<http::string_body>> parser;
    for (int fresh = 0; fresh < 2; ++fresh) {
      parser.emplace();
      parser->body_limit(kMaxBodyBytes);
      if (connection == nullptr) {
        absl::StatusOr<std::unique_ptr<Connection>> made = Connect();
        if (!made.ok()) {
          status = made.status();
          break;
        }
        connection = *std::move(made);
        reused = false;
      }
      requests_sent_.fetch_add(1);
      status = connection->Write(request, retry_.request_timeout, nullptr);
      if (status.ok()) status = connection->Read(*parser, retry_.request_timeout, nullptr);
      if (status.ok() || !reused || absl::IsCancelled(status)) break;
      connection.reset();
    }
    if (status.ok()) {
      http::response<http::string_body> response = parser->release();
      HttpResult result{static_cast<int>(response.result_int()), std::move(response.body())};
      if (response.keep_alive()) {
        std::lock_guard<std::mutex> lock(pool_mu_);
        idle_.push_back(std::move(connection));
      }
      if (!Retriable(result.status) || DisruptionBudgetRefusal(result) || attempt >= retry_.max_attempts) {
        return result;
      }
      std::chrono::milliseconds wait = backoff;
      if (auto retry_after = response.find(http::field::retry_after); retry_after != response.end()) {
        int seconds = std::atoi(std::string(retry_after->value()).c_str());
        if (seconds > 0) wait = std::min<std::chrono::milliseconds>(std::chrono::seconds(seconds), retry_.max_backoff);
      }
      LAHAR_LOG(1, "kube") << method << " " << target << ": " << result.Describe() << "; retrying in "
                           << wait.count() << "ms";
      std::this_thread::sleep_for(wait);
    } else {
      if (absl::IsCancelled(status)) return status;
      last_error = status;
      if (attempt >= retry_.max_attempts) {
        return absl::Status(status.code(), StrCat(method, " ", target, ": ", status.message()));
      }
      LAHAR_LOG(1, "kube") << method << " " << target << ": " << status.message() << "; retrying in "
                           << backoff.count() << "ms";
      std::this_thread::sleep_for(backoff);
    }
    backoff = std::min(backoff * 2, retry_.max_backoff);
  }
}

absl::Status KubeClient::Stream(std::string_view target, const std::function<void(std::string_view)>& on_line,
                                const std::atomic<bool>& stop, std::chrono::seconds idle_timeout, int* http_status) {
  if (http_status != nullptr) *http_status = 0;
  if (shutdown_.load()) return absl::CancelledError("client shut down");
  limiter_.Wait();
  absl::StatusOr<std::unique_ptr<Connection>> connection = Connect();
  if (!connection.ok()) return connection.status();
  http::request<http::string_body> request = MakeRequest(http::verb::get, target, config_, Token());
  request.prepare_payload();
  requests_sent_.fetch_add(1);
  absl::Status status = (*connection)->Write(request, retry_.request_timeout, &stop);
  if (!status.ok()) return status;

  http::response_parser<http::buffer_body> parser;
  // A watch has no end. (Not boost::none: Beast 1.74 compares lengths against it as if it were 0.)
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  status = (*connection)->ReadHeader(parser, idle_timeout, &stop);
  if (!status.ok()) return status;
  const int code = static_cast<int>(parser.get().result_int());
  if (http_status != nullptr) *http_status = code;

  std::string pending;  // the unfinished last line
  std::string error_body;
  char chunk[64 * 1024];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof(chunk);
    status = (*connection)->ReadSome(parser, idle_timeout, &stop);
    if (!status.ok()) return status;
    size_t n = sizeof(chunk) - parser.get().body().size;
    if (code != 200) {
      error_body.append(chunk, std::min(n, size_t{4096} - std::min(error_body.size(), size_t{4096})));
      continue;
    }
    pending.append(chunk, n);
    size_t start = 0;
    for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos; start = newline + 1) {
      if (newline > start) on_line(std::string_view(pending).substr(start, newline - start));
    }
    pending.erase(0, start);
  }
  if (code != 200) {
    return absl::FailedPreconditionError(HttpResult{code, std::move(error_body)}.Describe());
  }
  if (!pending.empty()) on_line(pending);
  return absl::OkStatus();
}

}  // namespace lahar
