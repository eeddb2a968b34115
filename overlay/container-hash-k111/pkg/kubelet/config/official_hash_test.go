package config

import (
	"testing"

	"k8s.io/api/core/v1"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/capabilities"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/goldens"
)

// The hashes the official 1.7 and 1.8 binaries (go1.8.3) and both
// rebuilt by a newer Go stored on the containers of the test manifests
// (overlay legacy-types' goldens, lines 1.7 and 1.8) are accepted for the
// pods this tree decodes from the same manifests: containers an official
// 1.7 or 1.8 kubelet started are kept however many switches later they
// reach this kubelet.
func TestAcceptsTheOfficial17And18Hashes(t *testing.T) {
	const dir = "../legacytypes/testdata/official"
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	checked, differ := 0, 0
	for _, line := range []string{"1.7", "1.8"} {
		gs, err := goldens.Load(dir, line)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			data, err := goldens.Manifest(dir, g)
			if err != nil {
				t.Fatal(err)
			}
			parsed, pod, err := tryDecodeSinglePod(data, func(p *api.Pod) error {
				if p.Namespace == "" {
					p.Namespace = "default" // as applyDefaults; validation wants one
				}
				return nil
			})
			if !parsed || err != nil {
				t.Fatalf("%s: parsed %v, %v", g.File, parsed, err)
			}
			for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
				for i := range cs {
					c := &cs[i]
					want, ok := g.Containers[c.Name]
					if !ok {
						t.Fatalf("%s/%s: no golden hash (line %s)", g.File, c.Name, line)
					}
					for build, h := range map[string]uint64{"official": want.OfficialHash, "newer Go": want.NewerGoHash} {
						if _, ok := kubecontainer.ContainerHashAccepted(c, h); !ok {
							t.Errorf("%s/%s: the %s %s binary's hash %d is not accepted: the container would be recreated", g.File, c.Name, build, line, h)
						}
					}
					if want.OfficialHash != want.NewerGoHash {
						differ++
					}
					checked++
				}
			}
		}
	}
	if differ == 0 {
		t.Errorf("none of %d golden containers has an official hash other than its newer-Go one: the inf.Dec case is not covered", checked)
	}
}
