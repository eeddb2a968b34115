package kuberuntime

import (
	"testing"

	"k8s.io/api/core/v1"
	runtimeapi "k8s.io/kubernetes/pkg/kubelet/apis/cri/v1alpha1/runtime"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// A container started by kubelet 1.7 (stored hash 1559107639) or by this
// release's vanilla kubelet (storedByOthers, in hash_release_test.go) is
// unchanged for this kubelet: computePodActions must not kill it. A new
// image is a change.
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
	for release, stored := range storedByOthers {
		if _, _, changed := containerChanged(c, &kubecontainer.ContainerStatus{Hash: stored}); changed {
			t.Errorf("container started by %s (hash %d) would be killed and recreated", release, stored)
		}
	}
	c.Image += "-new"
	if _, _, changed := containerChanged(c, &kubecontainer.ContainerStatus{Hash: 1559107639}); !changed {
		t.Error("an image change is not seen as a change")
	}
}

// A container this kubelet created records its native hash, so an edit to
// a field 1.7 lacks -- allowPrivilegeEscalation inside an existing
// securityContext, as a static pod with a pinned uid gets when its
// manifest is edited -- is a change: the 1.7 projection alone would hide
// it. The hashes travel through the annotations, as in a real sync.
func TestContainerChangedSeesEditsToNewerFields(t *testing.T) {
	yes, no := true, false
	uid := int64(1000)
	before := &v1.Container{
		Name: "app", Image: "busybox",
		SecurityContext: &v1.SecurityContext{RunAsUser: &uid, AllowPrivilegeEscalation: &yes},
		VolumeMounts:    []v1.VolumeMount{{Name: "v", MountPath: "/v"}},
	}
	pod := &v1.Pod{}
	status := toKubeContainerStatus(&runtimeapi.ContainerStatus{
		Id:          "c1",
		Image:       &runtimeapi.ImageSpec{Image: "busybox"},
		Annotations: newContainerAnnotations(before, pod, 0),
		Labels:      newContainerLabels(before, pod),
	}, "docker")
	if _, _, changed := containerChanged(before, status); changed {
		t.Fatal("the container's own spec is seen as changed")
	}
	edits := map[string]func(c *v1.Container){
		"allowPrivilegeEscalation flipped": func(c *v1.Container) { c.SecurityContext.AllowPrivilegeEscalation = &no },
		"mountPropagation set": func(c *v1.Container) {
			p := v1.MountPropagationHostToContainer
			c.VolumeMounts[0].MountPropagation = &p
		},
	}
	for name, edit := range releaseOnlyEdits {
		edits[name] = edit
	}
	for name, edit := range edits {
		after := before.DeepCopy()
		edit(after)
		if _, _, changed := containerChanged(after, status); !changed {
			t.Errorf("%s: not seen as a change for a container this kubelet created", name)
		}
	}
}

// A sync checks every container of every pod: for a container the baseline
// release created, containerChanged hashes it once (the baseline hash it
// reports is the one it compared), measured in allocations of the dump.
func TestContainerChangedHashesBaselineOnce(t *testing.T) {
	c := &v1.Container{Name: "app", Image: "busybox", Args: []string{"--port", "8080"},
		Env: []v1.EnvVar{{Name: "A", Value: "1"}}, VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v"}}}
	status := &kubecontainer.ContainerStatus{Hash: kubecontainer.HashContainer(c)}
	hash := testing.AllocsPerRun(20, func() { kubecontainer.HashContainer(c) })
	changed := testing.AllocsPerRun(20, func() { containerChanged(c, status) })
	if changed > 1.5*hash {
		t.Errorf("containerChanged allocates %.0f times per call, one baseline hash %.0f: it hashes more than once", changed, hash)
	}
}

// What a sync pays per container: one made by 1.7 (projection, baseline
// first) and one this kubelet made (native hash, exact).
func BenchmarkContainerChanged(b *testing.B) {
	c := &v1.Container{Name: "app", Image: "busybox", Args: []string{"--port", "8080"},
		Env: []v1.EnvVar{{Name: "A", Value: "1"}}, VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v"}}}
	native := kubecontainer.HashContainerNative(c)
	for name, status := range map[string]*kubecontainer.ContainerStatus{
		"made-by-1.7":  {Hash: kubecontainer.HashContainer(c)},
		"made-by-self": {Hash: kubecontainer.HashContainer(c), NativeHash: &native},
	} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, changed := containerChanged(c, status); changed {
					b.Fatal("changed")
				}
			}
		})
	}
}
