//go:build tools

// Package tools pins the command this wrapper module builds; it is never
// compiled (hack/build-control-plane.sh runs `go build
// github.com/kubeflow/training-operator/cmd/training-operator.v1`).
package tools

import _ "github.com/kubeflow/training-operator/cmd/training-operator.v1"
