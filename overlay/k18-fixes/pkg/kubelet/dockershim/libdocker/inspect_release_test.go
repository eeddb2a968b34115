package libdocker

// What the shared inspect deadline tests (series inspect-deadline-tests)
// need that differs between releases' libdocker.

import dockerapi "github.com/docker/docker/client"

var newDockerAPIClient = dockerapi.NewClient

// releaseRequestTimeoutCalls are this release's other inspects that keep
// the request timeout: this release's client has no InspectContainerWithSize.
func releaseRequestTimeoutCalls(d Interface) []namedCall {
	return nil
}
