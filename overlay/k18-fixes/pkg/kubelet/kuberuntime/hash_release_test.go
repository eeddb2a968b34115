package kuberuntime

import "k8s.io/api/core/v1"

// storedByOthers are the field report container's hashes other kubelets
// stored: 1.7's, and vanilla 1.8's (measured with real kubelets).
var storedByOthers = map[string]uint64{"1.7": 1559107639, "1.8": 77704989}

// releaseOnlyEdits: 1.8's own fields (allowPrivilegeEscalation,
// mountPropagation) are edited in the shared test already.
var releaseOnlyEdits = map[string]func(c *v1.Container){}
