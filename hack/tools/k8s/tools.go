//go:build tools

// Package tools pins the commands this wrapper module builds; it is never
// compiled (hack/build-control-plane.sh runs `go build` on the command paths).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
