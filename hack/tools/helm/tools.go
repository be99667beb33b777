//go:build tools

// Package tools pins the command this wrapper module builds; it is never
// compiled (hack/build-control-plane.sh runs `go build helm.sh/helm/v4/cmd/helm`).
package tools

import _ "helm.sh/helm/v4/cmd/helm"
