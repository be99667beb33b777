// Where the apiserver is and how to authenticate to it: from a kubeconfig file, from the
// service account of the pod we run in, or from --master alone.
#ifndef LAHAR_CACHE_KUBE_KUBECONFIG_H_
#define LAHAR_CACHE_KUBE_KUBECONFIG_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace lahar {

struct ClientConfig {
  bool tls = true;
  std::string host;  // name or IP literal, without brackets
  std::string port;  // "443" when the URL names none
  std::string bearer_token;
  std::string token_file;  // re-read when it changes (projected tokens rotate)
  std::string ca_pem;      // empty: the system's trust store
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  double qps = 50;  // client-side rate limit shared by every request
  int burst = 100;
};

// Splits "https://host:port" (also http://, IPv6 in brackets, a trailing path is refused).
absl::Status ParseServerUrl(std::string_view url, ClientConfig& config);

// Reads a kubeconfig: the context named `context`, else current-context. File paths inside
// are relative to the kubeconfig's folder, as kubectl resolves them.
absl::StatusOr<ClientConfig> LoadKubeconfig(const std::string& path, std::string_view context = "");

// The pod's service account: KUBERNETES_SERVICE_HOST/PORT and the token and CA mounted under
// /var/run/secrets/kubernetes.io/serviceaccount (`root` replaces that folder in tests).
absl::StatusOr<ClientConfig> InClusterConfig(
    const std::string& root = "/var/run/secrets/kubernetes.io/serviceaccount");

// Whole file into a string; NotFound / PermissionDenied name the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace lahar

#endif  // LAHAR_CACHE_KUBE_KUBECONFIG_H_
