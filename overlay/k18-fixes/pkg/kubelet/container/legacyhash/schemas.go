package legacyhash

// nativeName is this kubelet's own schema: 1.8's v1.Container as the
// official go1.8.3 build prints it, which both variants of this build
// reproduce (k18-build 0002). "1.8+newergo" after it is 1.8 built by a
// newer Go without that patch.
const nativeName = "1.8"

// schemas, oldest first.
var schemas = go183Schemas
