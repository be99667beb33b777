#include "scheduler/daemon/http_server.h"

#include <atomic>
#include <charconv>
#include <cstdint>
#include <exception>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/status/status.h"
#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using ErrorCode = boost::system::error_code;

constexpr char kTextPlain[] = "text/plain; charset=utf-8";

struct ListenAddress {
  std::optional<net::ip::address> host;  // none: every interface
  unsigned short port = 0;
};

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("listen address \"", text, "\": ", why));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return invalid("expected host:port, e.g. \":8080\" or \"127.0.0.1:8080\"");
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return invalid("the port must be a number from 0 to 65535");
  }
  ListenAddress address{std::nullopt, static_cast<unsigned short>(value)};
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) {
    host = host.substr(1, host.size() - 2);
  } else if (host.find_first_of("[]:") != std::string_view::npos) {
    return invalid("an IPv6 host needs brackets, e.g. \"[::1]:8080\"");
  }
  if (host == "localhost") host = "127.0.0.1";
  if (bracketed || !host.empty()) {
    ErrorCode parse_error;
    address.host = net::ip::make_address(std::string(host), parse_error);
    if (parse_error) return invalid("the host must be an IP address or \"localhost\"");
  }
  return address;
}

ErrorCode Listen(tcp::acceptor& acceptor, const tcp::endpoint& endpoint, bool dual_stack) {
  ErrorCode ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec && dual_stack) acceptor.set_option(net::ip::v6_only(false), ec);
  // Lets a restarted daemon bind while old connections linger in TIME_WAIT; on Linux it does
  // not let two servers listen on one port.
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    ErrorCode ignored;
    acceptor.close(ignored);
  }
  return ec;
}

// What every connection reads: the handlers, the limits and the connection count.
struct ServerState {
  const HttpHandlers handlers;
  const HttpServerOptions options;
  std::atomic<int> connections{0};

  http::response<http::string_body> Respond(const http::request<http::string_body>& request) const;
};

// For a request that could not be parsed: answer, then close.
http::response<http::string_body> ErrorResponse(http::status status, std::string_view body) {
  http::response<http::string_body> response(status, 11);
  response.set(http::field::server, "lahar");
  response.set(http::field::content_type, kTextPlain);
  response.body() = std::string(body);
  response.keep_alive(false);
  response.prepare_payload();
  return response;
}

HttpResponse CallHandler(const HttpHandler& handler, const HttpRequest& request) {
  // A handler that throws is a bug, but it must not take the server's thread down with it.
  try {
    HttpResponse response = handler(request);
    if (response.status >= 100 && response.status <= 599) return response;
    LAHAR_ERROR("http") << request.path << ": handler returned status " << response.status;
  } catch (const std::exception& e) {
    LAHAR_ERROR("http") << request.path << ": handler threw: " << e.what();
  } catch (...) {
    LAHAR_ERROR("http") << request.path << ": handler threw";
  }
  return {500, std::string(kTextPlain), "500 internal server error\n"};
}

http::response<http::string_body> ServerState::Respond(
    const http::request<http::string_body>& request) const {
  const std::string_view target(request.target().data(), request.target().size());
  const size_t question = target.find('?');
  HttpRequest req{std::string(request.method_string()), std::string(target.substr(0, question)),
                  ""};
  if (question != std::string_view::npos) req.query = std::string(target.substr(question + 1));
  const bool head = request.method() == http::verb::head;
  HttpResponse out;
  auto it = handlers.find(req.path);
  if (it == handlers.end()) {
    out = {404, std::string(kTextPlain), "404 page not found\n"};
  } else if (request.method() != http::verb::get && !head) {
    out = {405, std::string(kTextPlain), "405 method not allowed\n"};
  } else {
    out = CallHandler(it->second, req);
  }
  LAHAR_LOG(2, "http") << req.method << ' ' << target << " -> " << out.status;

  http::response<http::string_body> response;
  response.version(request.version());
  response.result(static_cast<unsigned>(out.status));
  response.set(http::field::server, "lahar");
  response.set(http::field::content_type, out.content_type);
  if (out.status == 405) response.set(http::field::allow, "GET, HEAD");
  response.keep_alive(request.keep_alive());
  // HEAD: the length the body would have, without the body.
  response.content_length(out.body.size());
  if (!head) response.body() = std::move(out.body);
  return response;
}

// One connection: read a request, write its response, repeat while the client keeps it alive.
// Only its pending operation owns it, so it goes away (closing the socket) when the connection
// ends or the io_context is destroyed.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ServerState& state)
      : stream_(std::move(socket)), state_(state), buffer_(state.options.max_request_bytes) {
    ++state_.connections;
    // Without it, a response written while the previous one awaits its ACK (pipelining) waits
    // for the client's delayed ACK, some 40 ms.
    ErrorCode ignored;
    stream_.socket().set_option(tcp::no_delay(true), ignored);
  }
  ~Session() { --state_.connections; }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Read(); });
  }

 private:
  void Read() {
    const auto limit = static_cast<std::uint32_t>(state_.options.max_request_bytes);
    parser_.emplace();
    parser_->header_limit(limit);
    parser_->body_limit(limit);
    // Covers the whole request, so a client trickling bytes is cut off too.
    stream_.expires_after(state_.options.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](ErrorCode ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(ErrorCode ec) {
    if (ec == http::error::header_limit || ec == http::error::body_limit ||
        ec == http::error::buffer_overflow) {
      return Write(ErrorResponse(http::status::payload_too_large, "413 request too large\n"));
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return Close();
    if (ec.category() == http::make_error_code(http::error::bad_method).category()) {
      return Write(ErrorResponse(http::status::bad_request, "400 bad request\n"));
    }
    if (ec) return Close();  // timeout, reset, aborted
    Write(state_.Respond(parser_->get()));
  }

  void Write(http::response<http::string_body> response) {
    response_ = std::move(response);
    stream_.expires_after(state_.options.idle_timeout);
    http::async_write(stream_, response_, [self = shared_from_this()](ErrorCode ec, size_t) {
      if (ec || self->response_.need_eof()) return self->Close();
      self->Read();
    });
  }

  void Close() {
    ErrorCode ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  ServerState& state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

struct HttpServer::Impl {
  Impl(HttpHandlers handlers, HttpServerOptions options)
      : state{std::move(handlers), options}, ioc(std::in_place, options.threads),
        acceptor(std::in_place, *ioc), retry_timer(std::in_place, *ioc) {}

  void Accept() {
    acceptor->async_accept(net::make_strand(*ioc), [this](ErrorCode ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted) return;
      if (ec) {
        // E.g. out of file descriptors: retrying at once would spin.
        LAHAR_WARN("http") << "accept: " << ec.message();
        retry_timer->expires_after(std::chrono::milliseconds(100));
        retry_timer->async_wait([this](ErrorCode wait_error) {
          if (!wait_error) Accept();
        });
        return;
      }
      if (state.connections.load() >= state.options.max_connections) {
        LAHAR_WARN("http") << "closing a new connection: " << state.connections.load()
                           << " already open";
      } else {
        std::make_shared<Session>(std::move(socket), state)->Start();
      }
      Accept();
    });
  }

  ServerState state;  // outlives ioc, whose destruction destroys the sessions that use it
  std::optional<net::io_context> ioc;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> retry_timer;
  std::vector<std::thread> threads;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(std::string_view listen_address,
                                                              HttpHandlers handlers,
                                                              HttpServerOptions options) {
  ASSIGN_OR_RETURN(const ListenAddress address, ParseListenAddress(listen_address));
  if (options.threads < 1 || options.max_connections < 1 || options.max_request_bytes < 1 ||
      options.max_request_bytes > UINT32_MAX) {
    return absl::InvalidArgumentError("HttpServerOptions out of range");
  }
  auto impl = std::make_unique<Impl>(std::move(handlers), options);
  ErrorCode ec;
  if (address.host) {
    ec = Listen(*impl->acceptor, tcp::endpoint(*address.host, address.port), /*dual_stack=*/false);
  } else {
    // Every interface: IPv6 and IPv4 on one socket where the host has IPv6, else IPv4 only.
    ec = Listen(*impl->acceptor, tcp::endpoint(net::ip::address_v6::any(), address.port),
                /*dual_stack=*/true);
    if (ec) {
      ec = Listen(*impl->acceptor, tcp::endpoint(net::ip::address_v4::any(), address.port),
                  /*dual_stack=*/false);
    }
  }
  tcp::endpoint bound;
  if (!ec) bound = impl->acceptor->local_endpoint(ec);
  if (ec) {
    std::string message = StrCat("listen address \"", listen_address, "\": ", ec.message());
    if (ec == net::error::access_denied) return absl::PermissionDeniedError(message);
    return absl::UnavailableError(message);
  }
  impl->Accept();
  for (int i = 0; i < options.threads; ++i) {
    impl->threads.emplace_back([ioc = &*impl->ioc] { ioc->run(); });
  }
  LAHAR_LOG(1, "http") << "listening on " << bound;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), bound.port()));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl, int port)
    : impl_(std::move(impl)), port_(port) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (!impl_->ioc) return;
  impl_->ioc->stop();
  for (std::thread& thread : impl_->threads) thread.join();
  impl_->threads.clear();
  impl_->retry_timer.reset();
  impl_->acceptor.reset();
  impl_->ioc.reset();  // destroys the pending operations, and with them every Session
}

}  // namespace lahar
