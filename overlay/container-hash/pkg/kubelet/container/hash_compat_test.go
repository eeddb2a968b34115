package container

import (
	"testing"

	"k8s.io/api/core/v1"
)

// The field report's container (seeds/000): a 1.7 kubelet stored
// 1559107639, a vanilla 1.8 77704989, a vanilla 1.9 1428860573 (measured
// with real kubelets). This kubelet must write 1.7's and accept those of
// every release from 1.7 up to its own (fieldReportStored, in
// hash_release_test.go), so a switch between them recreates nothing.
func TestHashContainerIsLegacyCompatible(t *testing.T) {
	c := &v1.Container{
		Name:  "prometheus-node-exporter",
		Image: "harbor.finupgroup.com/kubernetes/node-exporter:v0.16.0",
		Ports: []v1.ContainerPort{{Name: "prom-node-exp", HostPort: 9100, ContainerPort: 9100, Protocol: v1.ProtocolTCP}},
		VolumeMounts: []v1.VolumeMount{{Name: "default-token-bks80", ReadOnly: true,
			MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: v1.TerminationMessageReadFile,
		ImagePullPolicy:          v1.PullIfNotPresent,
	}
	if got := HashContainer(c); got != 1559107639 {
		t.Errorf("HashContainer = %d, want 1.7's 1559107639", got)
	}
	for release, stored := range fieldReportStored {
		if want, ok := ContainerHashAccepted(c, stored); !ok || want != 1559107639 {
			t.Errorf("hash %d stored by a %s kubelet is not accepted: the container would be recreated", stored, release)
		}
	}
	if got := HashContainerNative(c); got != fieldReportStored[ownRelease] {
		t.Errorf("HashContainerNative = %d, want vanilla %s's %d", got, ownRelease, fieldReportStored[ownRelease])
	}
	newImage := *c
	newImage.Image = "harbor.finupgroup.com/kubernetes/node-exporter:v0.17.0"
	for _, stored := range fieldReportStored {
		if _, ok := ContainerHashAccepted(&newImage, stored); ok {
			t.Errorf("a changed image is accepted with stored hash %d: it would never be rolled out", stored)
		}
	}
}
