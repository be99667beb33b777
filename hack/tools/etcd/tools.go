//go:build tools

// Package tools pins the command this wrapper module builds; it is never
// compiled (hack/build-control-plane.sh runs `go build go.etcd.io/etcd/server/v3`).
package tools

import _ "go.etcd.io/etcd/server/v3"
