package libdocker

// What the shared inspect deadline tests (series inspect-deadline-tests)
// need that differs between releases' libdocker: as 1.9 and 1.18 have it.

import dockerapi "github.com/docker/docker/client"

var newDockerAPIClient = dockerapi.NewClient

// releaseRequestTimeoutCalls are this release's other inspects that keep
// the request timeout: InspectContainerWithSize keeps the request timeout too.
func releaseRequestTimeoutCalls(d Interface) []namedCall {
	return []namedCall{{"InspectContainerWithSize(slow)", func() error { _, err := d.InspectContainerWithSize(slowContainerID); return err }}}
}
