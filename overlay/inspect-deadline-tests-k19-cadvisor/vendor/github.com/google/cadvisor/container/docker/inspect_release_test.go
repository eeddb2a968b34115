package docker

// What the shared inspect deadline tests (series inspect-deadline-tests)
// need that differs between releases' cadvisor: as 1.9, 1.12 and 1.13
// have it (cadvisor v0.28, v0.31, v0.32).

import (
	"time"

	dockerclient "github.com/docker/docker/client"
	"github.com/google/cadvisor/container"
	"github.com/google/cadvisor/manager/watcher"
)

type testDockerClient = dockerclient.Client

var newTestDockerClient = dockerclient.NewClient

type watchSource = watcher.ContainerWatchSource

const rawWatch = watcher.Raw

// handlerMetrics are the metrics the handlers under test collect.
var handlerMetrics = container.MetricSet{container.DiskUsageMetrics: struct{}{}}

// setInspectTimeout sets the deadline of the patched inspects and returns
// how to restore it.
func setInspectTimeout(d time.Duration) (restore func()) {
	old := inspectTimeout
	inspectTimeout = d
	return func() { inspectTimeout = old }
}
