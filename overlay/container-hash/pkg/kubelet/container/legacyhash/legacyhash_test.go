package legacyhash

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"reflect"
	"testing"

	fuzz "github.com/google/gofuzz"
	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	hashutil "k8s.io/kubernetes/pkg/util/hash"

	v17 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/v1"
	v18 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/v1"
)

// fieldReport is the container of the field report (seeds/000), as the
// kubelets logged it; the hashes below were measured with real kubelets.
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

// fieldReportHashes are the field report container's hashes, measured
// with real kubelets: 1.7's, 1.8's and this release's own
// (fieldReportNativeHash, in schemas_test.go; 1.8's own is 1.8's).
func fieldReportHashes() map[string]uint64 {
	m := map[string]uint64{"1.7": 1559107639, "1.8": 77704989}
	m[nativeName] = fieldReportNativeHash
	return m
}

func TestGoldenFieldReport(t *testing.T) {
	c := fieldReport()
	for schema, want := range fieldReportHashes() {
		if got, _ := HashAs(c, schema); got != want {
			t.Errorf("hash under %s = %d, want %d (measured with a real kubelet)", schema, got, want)
		}
	}
	if got := NativeHash(c); got != fieldReportNativeHash {
		t.Errorf("NativeHash = %d, want vanilla's %d", got, fieldReportNativeHash)
	}
	if got := Hash(c); got != 1559107639 {
		t.Errorf("Hash (baseline %s) = %d, want 1.7's 1559107639", Baseline(), got)
	}
	for _, stored := range fieldReportHashes() {
		if !Accepts(c, stored) {
			t.Errorf("stored hash %d not accepted", stored)
		}
	}
	if Accepts(c, 1559107640) {
		t.Error("an unrelated hash was accepted")
	}
}

// oracle is how the old kubelet itself got its container: by decoding the
// pod's JSON into its own types (dropping unknown fields), then hashing
// with the same DeepHashObject. It shares no code with Project.
func oracle(t testing.TB, c *v1.Container, into interface{}) uint64 {
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatal(err)
	}
	h := fnv.New32a()
	hashutil.DeepHashObject(h, reflect.ValueOf(into).Elem().Interface())
	return uint64(h.Sum32())
}

// decoded round-trips c through JSON, as kubelet receives every pod:
// quantities then carry no cached string, exactly as in a real kubelet.
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

func checkAgainstOracle(t *testing.T, name string, c *v1.Container) {
	t.Helper()
	c = decoded(t, c)
	if got, want := mustHashAs(t, c, "1.7+newergo"), oracle(t, c, &v17.Container{}); got != want {
		t.Errorf("%s: 1.7 projection hash %d, 1.7 decoding gives %d", name, got, want)
	}
	if got, want := mustHashAs(t, c, "1.8+newergo"), oracle(t, c, &v18.Container{}); got != want {
		t.Errorf("%s: 1.8 projection hash %d, 1.8 decoding gives %d", name, got, want)
	}
	// Without a quantity held as inf.Dec nothing Go-dependent is dumped:
	// the official go1.8.3 builds hash as builds by newer Go do (the
	// official goldens of inf.Dec quantities are in TestOfficialGoldens).
	if !hasDecQuantity(c) {
		for _, r := range []string{"1.7", "1.8"} {
			if got, want := mustHashAs(t, c, r), mustHashAs(t, c, r+"+newergo"); got != want {
				t.Errorf("%s: official %s hash %d, newer-Go %d", name, r, got, want)
			}
		}
	}
	for _, s := range Schemas() {
		if h := mustHashAs(t, c, s); !Accepts(c, h) {
			t.Errorf("%s: its own %s hash %d is not accepted", name, s, h)
		}
	}
	// A real change (the image, the one mutable field) changes every projection.
	changed := *c
	changed.Image += "-new"
	for _, s := range Schemas() {
		if mustHashAs(t, c, s) == mustHashAs(t, &changed, s) {
			t.Errorf("%s: changing the image leaves the %s hash unchanged", name, s)
		}
		if Accepts(&changed, mustHashAs(t, c, s)) {
			t.Errorf("%s: a container whose image changed is accepted with the old %s hash", name, s)
		}
	}
}

// hasDecQuantity says whether a quantity of c is held as inf.Dec (its
// slow-path form: fractions with binary suffixes, more than 18 digits...;
// read from the unexported field: every accessor may convert).
func hasDecQuantity(c *v1.Container) bool {
	qs := []resource.Quantity{}
	for _, l := range []v1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
		for _, q := range l {
			qs = append(qs, q)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil {
			qs = append(qs, e.ValueFrom.ResourceFieldRef.Divisor)
		}
	}
	for _, q := range qs {
		if !reflect.ValueOf(q).FieldByName("d").Field(0).IsNil() {
			return true
		}
	}
	return false
}

func mustHashAs(t testing.TB, c *v1.Container, s string) uint64 {
	h, err := HashAs(c, s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func ptrBool(b bool) *bool    { return &b }
func ptrInt64(i int64) *int64 { return &i }

// corpus covers the shapes operators run: every part of the Container
// graph that a field was added to, and the 1.8-only fields set (this
// release's own additions come from releaseCorpus).
func corpus() map[string]*v1.Container {
	cs := sharedCorpus()
	for name, c := range releaseCorpus() {
		cs[name] = c
	}
	return cs
}

func sharedCorpus() map[string]*v1.Container {
	prop := v1.MountPropagationHostToContainer
	cpu, mem := resource.MustParse("250m"), resource.MustParse("64Mi")
	return map[string]*v1.Container{
		"field report": fieldReport(),
		"security context": {Name: "sc", Image: "busybox", SecurityContext: &v1.SecurityContext{
			RunAsUser: ptrInt64(1000), RunAsNonRoot: ptrBool(true), ReadOnlyRootFilesystem: ptrBool(true),
			Privileged: ptrBool(false), Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN"}, Drop: []v1.Capability{"ALL"}},
			SELinuxOptions: &v1.SELinuxOptions{Level: "s0:c1"}}},
		"allowPrivilegeEscalation set by a newer API server's PodSecurityPolicy": {Name: "psp", Image: "busybox",
			SecurityContext: &v1.SecurityContext{AllowPrivilegeEscalation: ptrBool(false)}},
		"probes with named and numbered ports": {Name: "probes", Image: "nginx",
			Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: v1.ProtocolTCP}},
			LivenessProbe: &v1.Probe{Handler: v1.Handler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"),
				HTTPHeaders: []v1.HTTPHeader{{Name: "X", Value: "y"}}}}, InitialDelaySeconds: 3, PeriodSeconds: 5},
			ReadinessProbe: &v1.Probe{Handler: v1.Handler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt(80)}}, FailureThreshold: 2}},
		"exec probe": {Name: "exec", Image: "busybox", LivenessProbe: &v1.Probe{Handler: v1.Handler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/ok"}}}}},
		"env valueFrom with resource divisors": {Name: "env", Image: "busybox", Env: []v1.EnvVar{
			{Name: "PLAIN", Value: "v"},
			{Name: "LIMIT", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "env", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
			{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}},
			{Name: "SECRET", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "s"}, Key: "k", Optional: ptrBool(true)}}},
		}},
		"envFrom": {Name: "envfrom", Image: "busybox", EnvFrom: []v1.EnvFromSource{{Prefix: "P_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}}}},
		"quantities": {Name: "res", Image: "busybox", Resources: v1.ResourceRequirements{
			Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("128Mi")},
			Requests: v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}}},
		"empty, not nil, resource lists": {Name: "empty", Image: "busybox", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{}, Requests: v1.ResourceList{}}, Args: []string{}},
		"lifecycle hooks": {Name: "hooks", Image: "busybox", Lifecycle: &v1.Lifecycle{
			PostStart: &v1.Handler{Exec: &v1.ExecAction{Command: []string{"touch", "/started"}}},
			PreStop:   &v1.Handler{HTTPGet: &v1.HTTPGetAction{Path: "/stop", Port: intstr.FromInt(8080), Scheme: v1.URISchemeHTTP}}}},
		"subPath mounts and mount propagation": {Name: "mounts", Image: "busybox", VolumeMounts: []v1.VolumeMount{
			{Name: "data", MountPath: "/data", SubPath: "app"},
			{Name: "host", MountPath: "/host", ReadOnly: true, MountPropagation: &prop}}},
		"init container": {Name: "init", Image: "busybox", Command: []string{"sh", "-c"}, Args: []string{"echo init > /work/x"}, WorkingDir: "/work"},
		"stdin and tty":  {Name: "tty", Image: "busybox", Stdin: true, StdinOnce: true, TTY: true},
	}
}

func TestCorpusMatchesOldDecoders(t *testing.T) {
	for name, c := range corpus() {
		checkAgainstOracle(t, name, c)
	}
}

// Fields a 1.7 kubelet never saw must not change the hash it stored.
func TestNewFieldsDoNotChangeBaselineHash(t *testing.T) {
	plain := decoded(t, &v1.Container{Name: "a", Image: "busybox", SecurityContext: &v1.SecurityContext{RunAsUser: ptrInt64(1)},
		VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v"}}})
	prop := v1.MountPropagationBidirectional
	withNew := decoded(t, plain)
	withNew.SecurityContext.AllowPrivilegeEscalation = ptrBool(false)
	withNew.VolumeMounts[0].MountPropagation = &prop
	setReleaseOnlyFields(withNew)
	if Hash(plain) != Hash(withNew) {
		t.Error("fields 1.7 does not know changed the baseline hash")
	}
	if !Accepts(withNew, Hash(plain)) {
		t.Error("a container stored by 1.7 before PSP set allowPrivilegeEscalation is not accepted")
	}
}

// Random containers: every field of the graph, nil and empty alike.
func TestRandomContainersMatchOldDecoders(t *testing.T) {
	seed := rand.Int63()
	f := fuzz.New().NilChance(0.3).NumElements(0, 3).RandSource(rand.NewSource(seed)).Funcs(
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
	for i := 0; i < 2000; i++ {
		var c v1.Container
		f.Fuzz(&c)
		checkAgainstOracle(t, fmt.Sprintf("seed %d container %d", seed, i), &c)
		if t.Failed() {
			t.Fatalf("first failure with seed %d: %#v", seed, c)
		}
	}
}

func BenchmarkHashNative(b *testing.B) {
	c := decoded(b, fieldReport())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		mustHashAs(b, c, nativeName)
	}
}

// The cost kubelet pays per container per sync when the stored hash is the
// baseline's (containers it or the baseline release created).
func BenchmarkAcceptsBaseline(b *testing.B) {
	c := decoded(b, fieldReport())
	stored := Hash(c)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !Accepts(c, stored) {
			b.Fatal("not accepted")
		}
	}
}

func BenchmarkHashNativeRich(b *testing.B) {
	c := decoded(b, corpus()["probes with named and numbered ports"])
	c.Resources = corpus()["quantities"].Resources
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		mustHashAs(b, c, nativeName)
	}
}

func BenchmarkAcceptsBaselineRich(b *testing.B) {
	c := decoded(b, corpus()["probes with named and numbered ports"])
	c.Resources = corpus()["quantities"].Resources
	stored := Hash(c)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Accepts(c, stored)
	}
}
