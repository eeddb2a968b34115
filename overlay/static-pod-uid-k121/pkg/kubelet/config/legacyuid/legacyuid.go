// Package legacyuid lists the UIDs the kubelets of 1.20 to 1.25 derive for
// a static pod without metadata.uid, so that switching between them keeps
// the pod (package staticuid picks the one the node runs).
//
// applyDefaults (pkg/kubelet/config/common.go) sets such a pod's UID to the
// md5 of a go-spew dump of the decoded internal core.Pod; from 1.21
// (kubernetes#87461) the node name and manifest path follow the dump (1.20
// wrote them first, and the dump's reset discarded them). Each release's
// internal Pod graph differs from the one before (1.21:
// Probe.TerminationGracePeriodSeconds, PodAffinityTerm.NamespaceSelector,
// EphemeralVolumeSource; 1.22: PersistentVolumeClaimSpec.DataSourceRef,
// WindowsSecurityContextOptions.HostProcess; 1.23: PodSpec.OS, the
// ProbeHandler/LifecycleHandler split; 1.24: ObjectMeta.ClusterName
// renamed ZZZ_DeprecatedClusterName, TopologySpreadConstraint.MinDomains;
// 1.25: PodSecurityContext.HostUsers, ZZZ_DeprecatedClusterName gone, three
// more TopologySpreadConstraint fields), and go-spew prints every field,
// set or not: every pod gets a new UID at each of these switches, and the
// kubelet kills and starts it again. Here the pod is projected onto each
// release's graph (overlay legacy-types v120..v125, generated from that
// release's tree, its ObjectMeta included) and dumped under its type
// names. The official binaries (go1.15.15, go1.16.15, go1.19.6, go1.20.7,
// go1.20.10) lay out times as this Go does.
package legacyuid

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
	v120 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v120/core"
	v121 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v121/core"
	v122 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v122/core"
	v123 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v123/core"
	v124 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v124/core"
	v125 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v125/core"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// Source is where a static pod came from, as applyDefaults gets it.
type Source struct {
	Path   string // the manifest file, or the --manifest-url
	IsFile bool
	Node   types.NodeName
}

// Releases are the releases whose derivation every build knows, oldest
// first.
var Releases = []struct {
	Name string
	Pod  reflect.Type // its internal Pod graph
	// SourceHashed: the node name and manifest path follow the dump
	// (kubernetes#87461, 1.21).
	SourceHashed bool
}{
	{"1.20", reflect.TypeOf(v120.Pod{}), false},
	{"1.21", reflect.TypeOf(v121.Pod{}), true},
	{"1.22", reflect.TypeOf(v122.Pod{}), true},
	{"1.23", reflect.TypeOf(v123.Pod{}), true},
	{"1.24", reflect.TypeOf(v124.Pod{}), true},
	{"1.25", reflect.TypeOf(v125.Pod{}), true},
}

// Derivations returns the UIDs the kubelets of 1.20..1.25 derive for pod
// (decoded, before applyDefaults): this release's own first (what a pod
// that runs nowhere yet gets: 1.20's would bring back the duplicate UIDs
// kubernetes#87461 ended), then the others oldest first; duplicates
// dropped (this release's own projection among them).
func Derivations(pod *api.Pod, src Source) []staticuid.Derivation {
	ds := []staticuid.Derivation{{Name: "this release", UID: uid(func(h hash.Hash) { NativeHashPod(h, pod) }, true, src)}}
	for _, r := range Releases {
		t := r.Pod
		ds = append(ds, staticuid.Derivation{Name: r.Name, UID: uid(func(h hash.Hash) { HashPodAs(h, pod, t) }, r.SourceHashed, src)})
	}
	return staticuid.Dedup(ds)
}

// uid is the md5 of the dump, followed by the pod's source when the
// release hashes it (in applyDefaults' words).
func uid(dump func(hash.Hash), sourceHashed bool, src Source) string {
	h := md5.New()
	dump(h)
	if sourceHashed {
		if src.IsFile {
			fmt.Fprintf(h, "host:%s", src.Node)
			fmt.Fprintf(h, "file:%s", src.Path)
		} else {
			fmt.Fprintf(h, "url:%s", src.Path)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NativeHashPod is what the vanilla kubelet of this release dumps.
func NativeHashPod(hasher hash.Hash, pod *api.Pod) {
	hashutil.DeepHashObject(hasher, pod)
}

// HashPodAs dumps pod as the release whose internal Pod graph is t does:
// projected onto t (fields t lacks dropped, as its decoder dropped them),
// as a pointer, as applyDefaults passes it.
func HashPodAs(hasher hash.Hash, pod *api.Pod, t reflect.Type) {
	dst := legacytypes.Project(pod, t)
	copyProbeHandlers(dst, reflect.ValueOf(pod).Elem())
	hashutil.DeepHashObject(hasher, dst.Addr().Interface())
}

// copyProbeHandlers copies each probe's action, which Project, matching
// fields by name, drops across 1.22 <-> 1.23: 1.23 renamed the struct
// embedded in Probe from Handler to ProbeHandler (the field is named
// after its type). Lifecycle's fields kept their names.
func copyProbeHandlers(dst, src reflect.Value) {
	dspec, sspec := dst.FieldByName("Spec"), src.FieldByName("Spec")
	for _, list := range []string{"InitContainers", "Containers", "EphemeralContainers"} {
		dl, sl := dspec.FieldByName(list), sspec.FieldByName(list)
		if !dl.IsValid() || !sl.IsValid() {
			continue
		}
		for i := 0; i < dl.Len(); i++ {
			for _, probe := range []string{"LivenessProbe", "ReadinessProbe", "StartupProbe"} {
				dp, sp := dl.Index(i).FieldByName(probe), sl.Index(i).FieldByName(probe)
				if !dp.IsValid() || !sp.IsValid() || sp.IsNil() {
					continue
				}
				dh, dname := embedded(dp.Elem())
				sh, sname := embedded(sp.Elem())
				if dname != sname {
					dh.Set(legacytypes.Project(sh.Addr().Interface(), dh.Type()))
				}
			}
		}
	}
}

// embedded is a probe's one embedded struct (its action) and its name.
func embedded(probe reflect.Value) (reflect.Value, string) {
	for i := 0; i < probe.NumField(); i++ {
		if f := probe.Type().Field(i); f.Anonymous {
			return probe.Field(i), f.Name
		}
	}
	panic(fmt.Sprintf("legacyuid: %s embeds no action", probe.Type()))
}
