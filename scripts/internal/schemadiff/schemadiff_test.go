package schemadiff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// legacyTypes is the committed schemas' directory, from this package's.
var legacyTypes = filepath.Join("..", "..", "..", "overlay", "legacy-types", "pkg", "kubelet", "legacytypes")

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
	a := Graph{"Container": {{"Name", "string", "name"}, {"Resources", "Res", "resources"}}, "Res": {{"Limits", "map[string]string", "limits"}}}
	b := Graph{"Container": a["Container"], "Res": {{"Limits", "map[string]string", "limits"}, {"Claims", "[]string", "claims"}}}
	if got, _ := Differs(b, Changed(a, b), "Container", map[string]any{"name": "x"}); !got {
		t.Error("a changed struct held by value, absent from the JSON, was not reached")
	}
}
