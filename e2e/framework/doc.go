// Package framework runs real kubelets (built by `make kubelet`) against a
// real Docker Engine for the node e2e suites: kubelet processes in
// standalone mode fed static pods, the Docker API for observation, and the
// clean-up that leaves no kubelet, container or mount behind.
//
// Timing knobs live in one place (timeouts.go) so waits are named, not
// sprinkled.
package framework
