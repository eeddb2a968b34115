package container

// ownRelease is this kubelet's minor line.
const ownRelease = "1.8"

// fieldReportStored is what each kubelet, from 1.7 up to this one, stored
// for the field report's container (measured with real kubelets).
var fieldReportStored = map[string]uint64{"1.7": 1559107639, "1.8": 77704989}
