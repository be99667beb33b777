#include "cache/kube/kubeconfig.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "yaml-cpp/yaml.h"

namespace lahar {
namespace {

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

absl::StatusOr<std::string> DecodeBase64(const std::string& data, std::string_view field) {
  std::string out;
  if (!absl::Base64Unescape(data, &out)) return absl::InvalidArgumentError(StrCat(field, ": not valid base64"));
  return out;
}

// The named entry of a kubeconfig list (clusters, users, contexts), if there is one.
std::optional<YAML::Node> FindNamed(const YAML::Node& list, std::string_view name, const char* inner) {
  if (!list.IsSequence()) return std::nullopt;
  for (const auto& entry : list) {
    if (entry.IsMap() && entry["name"] && entry["name"].IsScalar() && entry["name"].as<std::string>() == name) {
      return entry[inner] && entry[inner].IsMap() ? entry[inner] : YAML::Node(YAML::NodeType::Map);
    }
  }
  return std::nullopt;
}

std::string Scalar(const YAML::Node& map, const char* key) {
  YAML::Node value = map[key];
  return value && value.IsScalar() ? value.as<std::string>() : "";
}

// `data` inline (base64) or `file` on disk; empty when neither is set.
absl::StatusOr<std::string> InlineOrFile(const YAML::Node& map, const char* data_key, const char* file_key,
                                         const std::string& base_dir) {
  if (std::string data = Scalar(map, data_key); !data.empty()) return DecodeBase64(data, data_key);
  if (std::string file = Scalar(map, file_key); !file.empty()) {
    absl::StatusOr<std::string> text = ReadFileToString(Resolve(base_dir, file));
    if (!text.ok()) return Annotate(text.status(), file_key);
    return text;
  }
  return std::string();
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string message = StrCat("cannot read ", path, ": ", std::strerror(err));
    return err == EACCES ? absl::PermissionDeniedError(message) : absl::NotFoundError(message);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status ParseServerUrl(std::string_view url, ClientConfig& config) {
  std::string_view rest = url;
  if (rest.substr(0, 8) == "https://") {
    config.tls = true;
    rest.remove_prefix(8);
  } else if (rest.substr(0, 7) == "http://") {
    config.tls = false;
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("server URL \"", url, "\": only http and https are supported"));
  } else {
    config.tls = true;  // kubectl treats a bare host:port as https
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("server URL \"", url, "\": a path prefix is not supported"));
  }
  std::string_view host = rest, port;
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return absl::InvalidArgumentError(StrCat("server URL \"", url, "\": unclosed ["));
    host = rest.substr(1, close - 1);
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return absl::InvalidArgumentError(StrCat("server URL \"", url, "\": junk after ]"));
      port = after.substr(1);
    }
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return absl::InvalidArgumentError(StrCat("server URL \"", url, "\": no host"));
  if (port.empty()) port = config.tls ? "443" : "80";
  for (char c : port) {
    if (c < '0' || c > '9') return absl::InvalidArgumentError(StrCat("server URL \"", url, "\": bad port"));
  }
  config.host = std::string(host);
  config.port = std::string(port);
  return absl::OkStatus();
}

absl::StatusOr<ClientConfig> LoadKubeconfig(const std::string& path, std::string_view context_name) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  const std::string where = StrCat("kubeconfig ", path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(StrCat(where, ": line ", e.mark.line + 1, ": ", e.msg));
  }
  if (!root.IsMap()) return absl::InvalidArgumentError(StrCat(where, ": not a YAML mapping"));
  const std::string base_dir = path.find('/') == std::string::npos ? "" : path.substr(0, path.rfind('/'));
  try {
    std::string name(context_name);
    if (name.empty()) name = Scalar(root, "current-context");
    if (name.empty()) return absl::InvalidArgumentError(StrCat(where, ": no current-context"));
    std::optional<YAML::Node> found_context = FindNamed(root["contexts"], name, "context");
    if (!found_context) return absl::InvalidArgumentError(StrCat(where, ": context \"", name, "\" not found"));
    const YAML::Node context = *found_context;
    const std::string cluster_name = Scalar(context, "cluster");
    std::optional<YAML::Node> found_cluster = FindNamed(root["clusters"], cluster_name, "cluster");
    if (!found_cluster) return absl::InvalidArgumentError(StrCat(where, ": cluster \"", cluster_name, "\" not found"));
    const YAML::Node cluster = *found_cluster;
    ClientConfig config;
    RETURN_IF_ERROR(Annotate(ParseServerUrl(Scalar(cluster, "server"), config), StrCat(where, ": cluster ", cluster_name)));
    config.insecure_skip_tls_verify = Scalar(cluster, "insecure-skip-tls-verify") == "true";
    absl::StatusOr<std::string> ca =
        InlineOrFile(cluster, "certificate-authority-data", "certificate-authority", base_dir);
    if (!ca.ok()) return Annotate(ca.status(), StrCat(where, ": cluster ", cluster_name));
    config.ca_pem = *std::move(ca);

    const std::string user_name = Scalar(context, "user");
    if (!user_name.empty()) {
      std::optional<YAML::Node> found_user = FindNamed(root["users"], user_name, "user");
      if (!found_user) return absl::InvalidArgumentError(StrCat(where, ": user \"", user_name, "\" not found"));
      const YAML::Node user = *found_user;
      const std::string user_where = StrCat(where, ": user ", user_name);
      if (user["exec"] || user["auth-provider"]) {
        return absl::UnimplementedError(StrCat(user_where, ": exec and auth-provider credentials are not supported; "
                                               "use a token or a client certificate"));
      }
      config.bearer_token = Scalar(user, "token");
      if (std::string file = Scalar(user, "tokenFile"); !file.empty() && config.bearer_token.empty()) {
        config.token_file = Resolve(base_dir, file);
        ASSIGN_OR_RETURN(config.bearer_token, ReadFileToString(config.token_file));
        absl::StripTrailingAsciiWhitespace(&config.bearer_token);
      }
      absl::StatusOr<std::string> cert = InlineOrFile(user, "client-certificate-data", "client-certificate", base_dir);
      if (!cert.ok()) return Annotate(cert.status(), user_where);
      absl::StatusOr<std::string> key = InlineOrFile(user, "client-key-data", "client-key", base_dir);
      if (!key.ok()) return Annotate(key.status(), user_where);
      if (cert->empty() != key->empty()) {
        return absl::InvalidArgumentError(StrCat(user_where, ": a client certificate needs both certificate and key"));
      }
      config.client_cert_pem = *std::move(cert);
      config.client_key_pem = *std::move(key);
    }
    return config;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(StrCat(where, ": ", e.what()));
  }
}

absl::StatusOr<ClientConfig> InClusterConfig(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0') {
    return absl::FailedPreconditionError(
        "not running in a pod (KUBERNETES_SERVICE_HOST/PORT unset): give --kubeconfig or --master");
  }
  ClientConfig config;
  config.tls = true;
  config.host = host;
  config.port = port;
  config.token_file = root + "/token";
  ASSIGN_OR_RETURN(config.bearer_token, ReadFileToString(config.token_file));
  absl::StripTrailingAsciiWhitespace(&config.bearer_token);
  ASSIGN_OR_RETURN(config.ca_pem, ReadFileToString(root + "/ca.crt"));
  return config;
}

}  // namespace lahar
