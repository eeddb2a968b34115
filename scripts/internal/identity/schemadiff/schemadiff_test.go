package schemadiff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legacyTypes is the committed schemas' directory, from this package's.
var legacyTypes = filepath.Join("..", "..", "..", "..", "overlay", "legacy-types", "pkg", "kubelet", "legacytypes")

func graph(t *testing.T, rel string) Graph {
	t.Helper()
	path := filepath.Join(legacyTypes, rel)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(path, src)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func container(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// 1.7 -> 1.8 on the committed schemas: VolumeMount gained
// MountPropagation and SecurityContext AllowPrivilegeEscalation, so
// exactly the containers with a volume mount or a securityContext print
// differently (the measured hashes agree: the field report's container,
// with one mount, 1559107639 -> 77704989).
func TestSeventeenToEighteen(t *testing.T) {
	g17, g18 := graph(t, "v17/v1/types.go"), graph(t, "v18/v1/types.go")
	changed := Changed(g17, g18)
	for _, want := range []string{"VolumeMount", "SecurityContext"} {
		if !changed[want] {
			t.Errorf("%s not seen as changed (changed: %v)", want, changed)
		}
	}
	if changed["Container"] {
		t.Error("Container seen as changed: 1.8 added no field to it")
	}
	for _, tc := range []struct {
		name, json string
		differs    bool
	}{
		{"plain", `{"name":"a","image":"busybox"}`, false},
		{"ports, env, resources, probes", `{"name":"a","image":"b","ports":[{"containerPort":80}],"env":[{"name":"X","value":"y"}],
			"resources":{"limits":{"cpu":"1"}},"livenessProbe":{"httpGet":{"path":"/","port":80}}}`, false},
		{"a volume mount", `{"name":"a","image":"b","volumeMounts":[{"name":"t","mountPath":"/t"}]}`, true},
		{"no volume mounts, empty list", `{"name":"a","image":"b","volumeMounts":[]}`, false},
		{"an empty securityContext", `{"name":"a","image":"b","securityContext":{}}`, true},
	} {
		got, path := Differs(g18, changed, "Container", container(t, tc.json))
		if got != tc.differs {
			t.Errorf("%s: differs %v (%s), want %v", tc.name, got, path, tc.differs)
		}
	}
}

// A struct held by value prints its fields even when the JSON leaves it
// out: a change to it reaches every container.
func TestValueStructAlwaysPrinted(t *testing.T) {
	a := Graph{"Container": {{Name: "Name", Type: "string", JSON: "name"}, {Name: "Resources", Type: "Res", JSON: "resources"}},
		"Res": {{Name: "Limits", Type: "map[string]string", JSON: "limits"}}}
	b := Graph{"Container": a["Container"],
		"Res": {{Name: "Limits", Type: "map[string]string", JSON: "limits"}, {Name: "Claims", Type: "[]string", JSON: "claims"}}}
	if got, _ := Differs(b, Changed(a, b), "Container", map[string]any{"name": "x"}); !got {
		t.Error("a changed struct held by value, absent from the JSON, was not reached")
	}
}

// parse reads struct types written with ' for the tags' backquotes.
func parse(t *testing.T, src string) Graph {
	t.Helper()
	g, err := Parse("test.go", []byte("package v1\n"+strings.ReplaceAll(src, "'", "`")))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The JSON hash (1.16 on) across 1.22 -> 1.23 in miniature: Probe's
// inline Handler became ProbeHandler and gained grpc, and Lifecycle's
// hooks became LifecycleHandler without it. Only a container that sets
// grpc marshals differently; the renames are not in the JSON.
func TestJSONDiffersOnlyWhereANewFieldIsSet(t *testing.T) {
	const both = `
type Container struct {
	Name          string     'json:"name"'
	Ports         []Port     'json:"ports,omitempty"'
	LivenessProbe *Probe     'json:"livenessProbe,omitempty"'
	Lifecycle     *Lifecycle 'json:"lifecycle,omitempty"'
	Stdin         bool       'json:"stdin,omitempty"'
}
type Port struct {
	ContainerPort int32 'json:"containerPort"'
}
type Exec struct {
	Command []string 'json:"command,omitempty"'
}`
	g22 := parse(t, both+`
type Probe struct {
	Handler                       'json:",inline"'
	PeriodSeconds                 int32  'json:"periodSeconds,omitempty"'
	TerminationGracePeriodSeconds *int64 'json:"terminationGracePeriodSeconds,omitempty"'
}
type Handler struct {
	Exec *Exec 'json:"exec,omitempty"'
}
type Lifecycle struct {
	PostStart *Handler 'json:"postStart,omitempty"'
}`)
	g23 := parse(t, both+`
type Probe struct {
	ProbeHandler                  'json:",inline"'
	PeriodSeconds                 int32  'json:"periodSeconds,omitempty"'
	TerminationGracePeriodSeconds *int64 'json:"terminationGracePeriodSeconds,omitempty"'
}
type ProbeHandler struct {
	Exec *Exec       'json:"exec,omitempty"'
	GRPC *GRPCAction 'json:"grpc,omitempty"'
}
type Lifecycle struct {
	PostStart *LifecycleHandler 'json:"postStart,omitempty"'
}
type LifecycleHandler struct {
	Exec *Exec 'json:"exec,omitempty"'
}
type GRPCAction struct {
	Port    int32   'json:"port"'
	Service *string 'json:"service"'
}`)
	for _, tc := range []struct {
		name, json string
		differs    bool
	}{
		{"plain", `{"name":"a"}`, false},
		{"exec probe, hook, ports", `{"name":"a","ports":[{"containerPort":80}],"livenessProbe":{"exec":{"command":["true"]},"periodSeconds":2,"terminationGracePeriodSeconds":0},
			"lifecycle":{"postStart":{"exec":{"command":["x"]}}},"stdin":false}`, false},
		{"a grpc probe", `{"name":"a","livenessProbe":{"grpc":{"port":9000}}}`, true},
		{"a grpc probe beside exec", `{"name":"a","livenessProbe":{"exec":{"command":["true"]},"grpc":{"port":9000}}}`, true},
		{"grpc on a hook (no such field in either)", `{"name":"a","lifecycle":{"postStart":{"grpc":{"port":9000}}}}`, false},
	} {
		got, path := JSONDiffers(g22, g23, "Container", container(t, tc.json))
		if got != tc.differs {
			t.Errorf("%s: differs %v (%s), want %v", tc.name, got, path, tc.differs)
		}
	}
	// A field without omitempty that one graph lacks is always written.
	g23["Container"] = append(g23["Container"], Field{Name: "New", Type: "string", JSON: "new"})
	if got, _ := JSONDiffers(g22, g23, "Container", container(t, `{"name":"a"}`)); !got {
		t.Error("a new field without omitempty was not seen")
	}
}
