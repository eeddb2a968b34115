package kuberuntime

import (
	"testing"

	"k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// A container started by kubelet 1.7 (stored hash 1559107639) or by a
// vanilla 1.9 (1428860573) is unchanged for this kubelet: computePodActions
// must not kill it. A new image is a change.
func TestContainerChangedAcceptsLegacyHashes(t *testing.T) {
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
	for release, stored := range map[string]uint64{"1.7": 1559107639, "1.9": 1428860573} {
		if _, _, changed := containerChanged(c, &kubecontainer.ContainerStatus{Hash: stored}); changed {
			t.Errorf("container started by %s (hash %d) would be killed and recreated", release, stored)
		}
	}
	c.Image += "-new"
	if _, _, changed := containerChanged(c, &kubecontainer.ContainerStatus{Hash: 1559107639}); !changed {
		t.Error("an image change is not seen as a change")
	}
}
