package docker

// What the shared inspect deadline tests (series inspect-deadline-tests)
// need that differs between releases' cadvisor.

import (
	"time"

	dockerclient "github.com/docker/docker/client"
	"github.com/google/cadvisor/container"
	"github.com/google/cadvisor/watcher"
)

type testDockerClient = dockerclient.Client

var newTestDockerClient = dockerclient.NewClient

type watchSource = watcher.ContainerWatchSource

const rawWatch = watcher.Raw

// handlerMetrics are the metrics the handlers under test collect.
var handlerMetrics = container.MetricSet{}

// setInspectTimeout sets the deadline of the patched inspects and returns
// how to restore it.
func setInspectTimeout(d time.Duration) (restore func()) {
	old := dockerTimeout
	SetTimeout(d)
	return func() { SetTimeout(old) }
}
