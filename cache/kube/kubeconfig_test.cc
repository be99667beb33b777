#include "cache/kube/kubeconfig.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "catch2/catch.hpp"

namespace lahar {
namespace {

// A folder of its own per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/lahar-kubeconfig-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr char kTwoUsers[] = R"(apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: pki/ca.crt
users:
- name: admin
  user:
    token: s3cret
- name: cert
  user:
    client-certificate: pki/admin.crt
    client-key-data: a2V5LWJ5dGVz
contexts:
- name: token-context
  context: {cluster: local, user: admin}
- name: cert-context
  context: {cluster: local, user: cert}
current-context: token-context
)";

TEST_CASE("a kubeconfig with a token: server, CA relative to the file, token") {
  TempDir dir;
  std::system(("mkdir -p " + dir.path() + "/pki").c_str());
  dir.Write("pki/ca.crt", "CA PEM");
  dir.Write("pki/admin.crt", "CERT PEM");
  std::string path = dir.Write("kubeconfig", kTwoUsers);

  absl::StatusOr<ClientConfig> config = LoadKubeconfig(path);
  REQUIRE(config.ok());
  CHECK(config->tls);
  CHECK(config->host == "127.0.0.1");
  CHECK(config->port == "6443");
  CHECK(config->ca_pem == "CA PEM");
  CHECK(config->bearer_token == "s3cret");
  CHECK(config->client_cert_pem.empty());

  absl::StatusOr<ClientConfig> cert = LoadKubeconfig(path, "cert-context");
  REQUIRE(cert.ok());
  CHECK(cert->bearer_token.empty());
  CHECK(cert->client_cert_pem == "CERT PEM");
  CHECK(cert->client_key_pem == "key-bytes");  // base64 "a2V5LWJ5dGVz"
}

TEST_CASE("kubeconfig errors name the file and what is wrong") {
  TempDir dir;
  SECTION("missing file") {
    absl::StatusOr<ClientConfig> config = LoadKubeconfig(dir.path() + "/nope");
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().message().find("nope") != absl::string_view::npos);
  }
  SECTION("unknown context") {
    std::string path = dir.Write("kubeconfig", kTwoUsers);
    absl::StatusOr<ClientConfig> config = LoadKubeconfig(path, "elsewhere");
    REQUIRE_FALSE(config.ok());
    CHECK(std::string(config.status().message()) ==
          "kubeconfig " + path + ": context \"elsewhere\" not found");
  }
  SECTION("a CA file that does not exist") {
    std::string path = dir.Write("kubeconfig", kTwoUsers);
    absl::StatusOr<ClientConfig> config = LoadKubeconfig(path);
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().message().find("certificate-authority") != absl::string_view::npos);
  }
  SECTION("bad YAML gives the line") {
    std::string path = dir.Write("kubeconfig", "clusters:\n- name: [unclosed\n");
    absl::StatusOr<ClientConfig> config = LoadKubeconfig(path);
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().message().find("line") != absl::string_view::npos);
  }
  SECTION("exec credentials are refused, not ignored") {
    std::string path = dir.Write("kubeconfig", R"(clusters: [{name: c, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)");
    absl::StatusOr<ClientConfig> config = LoadKubeconfig(path);
    REQUIRE_FALSE(config.ok());
    CHECK(absl::IsUnimplemented(config.status()));
  }
  SECTION("bad base64") {
    std::string path = dir.Write("kubeconfig", R"(clusters: [{name: c, cluster: {server: "https://h", certificate-authority-data: "@@@"}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x
)");
    absl::StatusOr<ClientConfig> config = LoadKubeconfig(path);
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().message().find("base64") != absl::string_view::npos);
  }
}

TEST_CASE("server URLs: schemes, default ports, IPv6, refusals") {
  ClientConfig c;
  REQUIRE(ParseServerUrl("https://api.example.com", c).ok());
  CHECK((c.tls && c.host == "api.example.com" && c.port == "443"));
  REQUIRE(ParseServerUrl("http://localhost:8080/", c).ok());
  CHECK((!c.tls && c.host == "localhost" && c.port == "8080"));
  REQUIRE(ParseServerUrl("https://[::1]:6443", c).ok());
  CHECK((c.host == "::1" && c.port == "6443"));
  REQUIRE(ParseServerUrl("10.0.0.1:6443", c).ok());  // kubectl: a bare host is https
  CHECK((c.tls && c.host == "10.0.0.1"));
  CHECK_FALSE(ParseServerUrl("ftp://h", c).ok());
  CHECK_FALSE(ParseServerUrl("https://h/prefix", c).ok());
  CHECK_FALSE(ParseServerUrl("https://h:12x", c).ok());
  CHECK_FALSE(ParseServerUrl("https://", c).ok());
}

TEST_CASE("in-cluster configuration reads the service account's token and CA") {
  TempDir dir;
  dir.Write("token", "sa-token\n");
  dir.Write("ca.crt", "CLUSTER CA");
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  absl::StatusOr<ClientConfig> config = InClusterConfig(dir.path());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  REQUIRE(config.ok());
  CHECK(config->bearer_token == "sa-token");  // newline trimmed
  CHECK(config->token_file == dir.path() + "/token");
  CHECK(config->ca_pem == "CLUSTER CA");
  CHECK(InClusterConfig(dir.path()).status().code() == absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace lahar
