package legacyhash

import (
	"encoding/json"
	"hash/fnv"
	"math/rand"
	"reflect"
	"testing"

	fuzz "github.com/google/gofuzz"
	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	hashutil "k8s.io/kubernetes/pkg/util/hash"

	v111 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v111/v1"
	v113 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v113/v1"
	v114 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v114/v1"
	v115 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v115/v1"
	v116 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v116/v1"
	v17 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/v1"
	v18 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/v1"
	v19 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v19/v1"
)

// fieldReport is the container of the field report (seeds/000).
func fieldReport() *v1.Container {
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

// fieldReportHashes are what the kubelets of each release stored for the
// field report's container, measured with real kubelets (1.7 official
// and rebuilt alike, as 1.8's: it holds no quantity; 1.9 .. 1.13, 1.14
// and 1.15, 1.16 .. 1.23 alike).
var fieldReportHashes = map[string]uint64{
	"1.7": 1559107639, "1.7+newergo": 1559107639, "1.8": 77704989, "1.8+newergo": 77704989,
	"1.9": 1428860573, "1.11": 1428860573, "1.13": 1428860573, "1.14": 2624730211, "1.15": 2624730211, "1.16": 2410530665,
}

func TestFieldReportUnderEverySchema(t *testing.T) {
	c := fieldReport()
	for name, want := range fieldReportHashes {
		if got, err := HashAs(c, name); err != nil || got != want {
			t.Errorf("hash under %s = %d (%v), want %d (measured with a real kubelet)", name, got, err, want)
		}
		if !Accepts(c, want) {
			t.Errorf("%s's hash %d is not accepted: a switch from %s would recreate the container", name, want, name)
		}
	}
	if got := Hash(c); got != fieldReportHashes[Native()] {
		t.Errorf("Hash = %d, want this release's own (%s) %d", got, Native(), fieldReportHashes[Native()])
	}
	other := *c
	other.Image += "-new"
	for name, stored := range fieldReportHashes {
		if Accepts(&other, stored) {
			t.Errorf("a new image is accepted against %s's hash: it would never be rolled out", name)
		}
	}
}

// oracle is how a release's kubelet itself got its container: decoded from
// the pod's JSON into that release's types (unknown fields dropped), then
// hashed as that release does. It shares no code with Project or hashAs.
func oracle(t testing.TB, c *v1.Container, into interface{}, asJSON bool) uint64 {
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatal(err)
	}
	h := fnv.New32a()
	if asJSON {
		out, err := json.Marshal(into)
		if err != nil {
			t.Fatal(err)
		}
		hashutil.DeepHashObject(h, out)
	} else {
		hashutil.DeepHashObject(h, reflect.ValueOf(into).Elem().Interface())
	}
	return uint64(h.Sum32())
}

// Random containers: every schema's hash is the oracle's, and each is
// accepted; vanilla kubelets differ where the releases' graphs do.
func TestRandomContainersMatchEachReleasesDecoder(t *testing.T) {
	f := fuzz.New().NilChance(0.3).NumElements(0, 2).RandSource(rand.NewSource(53)).Funcs(
		func(q *resource.Quantity, c fuzz.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1<<20), resource.DecimalSI)
		},
		func(s *intstr.IntOrString, c fuzz.Continue) {
			if c.RandBool() {
				*s = intstr.FromInt(c.Intn(65536))
			} else {
				*s = intstr.FromString(c.RandString())
			}
		},
	)
	for i := 0; i < 1000; i++ {
		var c v1.Container
		f.Fuzz(&c)
		c = *decoded(t, &c)
		for name, graph := range graphs {
			w := oracle(t, &c, graph(), name == "1.16")
			if got, _ := HashAs(&c, name); got != w {
				t.Fatalf("container %d: %s hash %d, %s's decoder gives %d", i, name, got, name, w)
			}
			if !Accepts(&c, w) {
				t.Fatalf("container %d: %s's hash %d not accepted", i, name, w)
			}
		}
	}
}

// graphs are the releases' own Container types, for the oracle.
var graphs = map[string]func() interface{}{
	"1.7+newergo": func() interface{} { return &v17.Container{} },
	"1.8+newergo": func() interface{} { return &v18.Container{} },
	"1.9":         func() interface{} { return &v19.Container{} },
	"1.11":        func() interface{} { return &v111.Container{} },
	"1.13":        func() interface{} { return &v113.Container{} },
	"1.14":        func() interface{} { return &v114.Container{} },
	"1.15":        func() interface{} { return &v115.Container{} },
	"1.16":        func() interface{} { return &v116.Container{} },
}

// Where vanilla kubelets recreate, and where they do not: the boundaries
// the releases' graphs draw (docs/fixes.md), by the oracle, not by the
// code under test; and the window accepts each side's hash.
func TestVanillaBoundaries(t *testing.T) {
	plain := &v1.Container{Name: "app", Image: "busybox"}
	mounted := &v1.Container{Name: "app", Image: "busybox", VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v"}}}
	uid := int64(1000)
	secured := &v1.Container{Name: "app", Image: "busybox", SecurityContext: &v1.SecurityContext{RunAsUser: &uid}}
	for _, tc := range []struct {
		what     string
		c        *v1.Container
		from, to string
		same     bool
	}{
		{"a plain container", plain, "1.7+newergo", "1.8+newergo", true},
		{"a volume mount (MountPropagation)", mounted, "1.7+newergo", "1.8+newergo", false},
		{"a plain container (VolumeDevices)", plain, "1.8+newergo", "1.9", false},
		{"a plain container", plain, "1.9", "1.11", true},
		{"a volume mount", mounted, "1.9", "1.11", true},
		{"a securityContext (RunAsGroup, 1.10)", secured, "1.9", "1.11", false},
		{"a plain container", plain, "1.11", "1.13", true},
		{"a volume mount", mounted, "1.11", "1.13", true},
		{"a securityContext (ProcMount, 1.12)", secured, "1.11", "1.13", false},
		{"a plain container", plain, "1.13", "1.14", true},
		{"a volume mount (SubPathExpr)", mounted, "1.13", "1.14", false},
		{"a plain container", plain, "1.14", "1.15", true},
		{"a volume mount", mounted, "1.14", "1.15", true},
		{"a securityContext (WindowsOptions)", secured, "1.14", "1.15", false},
		{"a plain container (JSON)", plain, "1.15", "1.16", false},
	} {
		from, to := oracle(t, tc.c, graphs[tc.from](), tc.from == "1.16"), oracle(t, tc.c, graphs[tc.to](), tc.to == "1.16")
		if (from == to) != tc.same {
			t.Errorf("%s, %s -> %s: hashes %d and %d, want equal %v", tc.what, tc.from, tc.to, from, to, tc.same)
		}
		if !Accepts(tc.c, from) || !Accepts(tc.c, to) {
			t.Errorf("%s, %s -> %s: %d or %d not accepted", tc.what, tc.from, tc.to, from, to)
		}
	}
}

// decoded round-trips c through JSON, as kubelet receives every pod.
func decoded(t testing.TB, c *v1.Container) *v1.Container {
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out v1.Container
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
