//go:build tools

// Package tools pins the command this wrapper module builds; it is never
// compiled (hack/build-control-plane.sh runs `go build sigs.k8s.io/kwok/cmd/kwok`).
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
