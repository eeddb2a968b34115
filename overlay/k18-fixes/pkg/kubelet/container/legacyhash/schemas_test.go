package legacyhash

import "k8s.io/api/core/v1"

// fieldReportNativeHash is what vanilla 1.8 writes for the field report's
// container: the official 1.8 binary's (the seeds' measured 1.8 hash).
const fieldReportNativeHash = 77704989

// releaseCorpus: 1.8's additions (mountPropagation,
// allowPrivilegeEscalation) are in the shared corpus already.
func releaseCorpus() map[string]*v1.Container { return nil }

// setReleaseOnlyFields: nothing beyond the 1.8 fields the shared test sets.
func setReleaseOnlyFields(*v1.Container) {}
