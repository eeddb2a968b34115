package kuberuntime

import (
	"testing"

	"k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// What the kubelets of 1.7 .. 1.18 stored for the field report's container
// (seeds/000), measured with real kubelets: 1.9 .. 1.13 alike, 1.14 and
// 1.15 alike, 1.16 .. 1.23 alike.
var windowStored = map[string]uint64{"1.7": 1559107639, "1.8": 77704989, "1.9": 1428860573, "1.10": 1428860573, "1.11": 1428860573, "1.12": 1428860573, "1.13": 1428860573, "1.14": 2624730211, "1.15": 2624730211, "1.16": 2410530665, "1.17": 2410530665, "1.18": 2410530665}

// The field report's container with a securityContext (runAsUser 1000),
// which 1.8 (AllowPrivilegeEscalation), 1.10 (RunAsGroup), 1.12
// (ProcMount), 1.14 and 1.15 print differently: what each release's
// vanilla build computes for it (its own decoder and HashContainer, in
// its cmd/podhash), 1.10 and 1.11 alike, 1.12 and 1.13 alike.
var windowStoredSecured = map[string]uint64{"1.7": 3840010277, "1.9": 539021586, "1.10": 2727791915, "1.11": 2727791915, "1.12": 1792574786, "1.13": 1792574786, "1.14": 360577764}

func windowSecured() *v1.Container {
	c := windowFieldReport()
	uid := int64(1000)
	c.SecurityContext = &v1.SecurityContext{RunAsUser: &uid}
	return c
}

func windowFieldReport() *v1.Container {
	return &v1.Container{
		Name:  "prometheus-node-exporter",
		Image: "harbor.finupgroup.com/kubernetes/node-exporter:v0.16.0",
		Ports: []v1.ContainerPort{{Name: "prom-node-exp", HostPort: 9100, ContainerPort: 9100, Protocol: v1.ProtocolTCP}},
		VolumeMounts: []v1.VolumeMount{{Name: "default-token-bks80", ReadOnly: true,
			MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: v1.TerminationMessageReadFile,
		ImagePullPolicy:          v1.PullIfNotPresent,
	}
}

// A container any kubelet of 1.7 .. 1.18 started is unchanged for this
// one: computePodActions must not kill it (the vanilla kubelet kills those
// of every release whose hash differs from its own). A new image or new
// arguments are a change, whoever started it.
func TestContainerChangedAcceptsTheWindowsHashes(t *testing.T) {
	c := windowFieldReport()
	for release, stored := range windowStored {
		if _, _, changed := containerChanged(c, &kubecontainer.ContainerStatus{Hash: stored}); changed {
			t.Errorf("container started by a %s kubelet (hash %d) would be killed and recreated", release, stored)
		}
	}
	for release, stored := range windowStoredSecured {
		if _, _, changed := containerChanged(windowSecured(), &kubecontainer.ContainerStatus{Hash: stored}); changed {
			t.Errorf("container with a securityContext started by a %s kubelet (hash %d) would be killed and recreated", release, stored)
		}
		other := windowSecured()
		*other.SecurityContext.RunAsUser = 1001
		if _, _, changed := containerChanged(other, &kubecontainer.ContainerStatus{Hash: stored}); !changed {
			t.Errorf("a new runAsUser on a container a %s kubelet started is not seen as a change", release)
		}
	}
	for what, edit := range map[string]func(*v1.Container){
		"a new image":     func(c *v1.Container) { c.Image += "-new" },
		"new arguments":   func(c *v1.Container) { c.Args = []string{"--web.listen-address=:9101"} },
		"a new port":      func(c *v1.Container) { c.Ports[0].HostPort = 9101 },
		"a removed mount": func(c *v1.Container) { c.VolumeMounts = nil },
	} {
		after := windowFieldReport()
		edit(after)
		for release, stored := range windowStored {
			if _, _, changed := containerChanged(after, &kubecontainer.ContainerStatus{Hash: stored}); !changed {
				t.Errorf("%s on a container a %s kubelet started is not seen as a change", what, release)
			}
		}
	}
}

// A sync checks every container of every pod: for a container this
// release's kubelets made, containerChanged hashes it once (this
// release's own hash is tried first), measured in allocations.
func TestContainerChangedHashesOwnOnce(t *testing.T) {
	c := &v1.Container{Name: "app", Image: "busybox", Args: []string{"--port", "8080"},
		Env: []v1.EnvVar{{Name: "A", Value: "1"}}, VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v"}}}
	status := &kubecontainer.ContainerStatus{Hash: kubecontainer.HashContainer(c)}
	hash := testing.AllocsPerRun(20, func() { kubecontainer.HashContainer(c) })
	changed := testing.AllocsPerRun(20, func() { containerChanged(c, status) })
	if changed > 1.5*hash {
		t.Errorf("containerChanged allocates %.0f times per call, one hash %.0f: it hashes more than once", changed, hash)
	}
}

// What a sync pays per container: one this release made (its own hash,
// first) and one 1.13 made (every schema up to 1.13's tried).
func BenchmarkContainerChangedWindow(b *testing.B) {
	c := windowFieldReport()
	for name, stored := range map[string]uint64{"made-by-own-release": kubecontainer.HashContainer(c), "made-by-1.13": windowStored["1.13"]} {
		status := &kubecontainer.ContainerStatus{Hash: stored}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, changed := containerChanged(c, status); changed {
					b.Fatal("changed")
				}
			}
		})
	}
}
