package staticuid

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var ds = []Derivation{{"official 1.7 (go1.8.3)", "official"}, {"1.7 built by Go >= 1.9", "newergo"}, {"1.9", "native"}}

func sandbox(uid, state string, created int64) Container {
	return Container{State: state, Created: created, Labels: map[string]string{
		typeLabel: sandboxType, uidLabel: uid, nameLabel: "etcd-node", namespaceLabel: "kube-system"}}
}

func record(t *testing.T, cs ...Container) {
	t.Helper()
	if _, err := RecordContainers(func() ([]Container, error) { return cs, nil }, time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Record(nil) })
}

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name    string
		node    []Container
		want    string
		running bool
	}{
		{"runs nowhere: the baseline's official derivation", nil, "official", false},
		{"runs under the newer-Go derivation", []Container{sandbox("newergo", "running", 1)}, "newergo", true},
		{"a running sandbox wins over a newer exited one",
			[]Container{sandbox("native", "exited", 9), sandbox("newergo", "running", 1)}, "newergo", true},
		{"of exited sandboxes the newest", []Container{sandbox("newergo", "exited", 1), sandbox("native", "exited", 2)}, "native", true},
		{"a sandbox under an unknown UID (pinned, or another derivation) is not followed",
			[]Container{sandbox("someone-elses", "running", 1)}, "official", false},
		{"an application container with the pod's labels is not a sandbox", []Container{{State: "running", Labels: map[string]string{
			typeLabel: "container", uidLabel: "native", nameLabel: "etcd-node", namespaceLabel: "kube-system"}}}, "official", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			record(t, tc.node...)
			d, running := Choose("kube-system", "etcd-node", ds)
			if d.UID != tc.want || running != tc.running {
				t.Errorf("Choose = %+v, %v; want %s, %v", d, running, tc.want, tc.running)
			}
			// Another pod's sandbox is never taken.
			if d, running := Choose("kube-system", "etcd-other", ds); d.UID != "official" || running {
				t.Errorf("another pod: %+v, %v", d, running)
			}
		})
	}
}

// A hung or failing runtime leaves every pod on its baseline derivation,
// and says so, without holding up the caller past the bound.
func TestRecordContainersBounded(t *testing.T) {
	record(t, sandbox("newergo", "running", 1))
	hang := make(chan struct{})
	defer close(hang)
	start := time.Now()
	_, err := RecordContainers(func() ([]Container, error) { <-hang; return nil, nil }, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "took more than") {
		t.Fatalf("hung list: err %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("waited %v", waited)
	}
	if d, _ := Choose("kube-system", "etcd-node", ds); d.UID != "official" {
		t.Errorf("after a hung list: %+v, want the baseline's (earlier records dropped)", d)
	}
	if _, err := RecordContainers(func() ([]Container, error) { return nil, errors.New("boom") }, time.Second); err == nil {
		t.Error("a failing list gave no error")
	}
}

func TestDedupKeepsTheFirstName(t *testing.T) {
	got := Dedup([]Derivation{{"official 1.7", "a"}, {"1.7 newer Go", "b"}, {"1.9", "a"}})
	want := []Derivation{{"official 1.7", "a"}, {"1.7 newer Go", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Dedup = %v, want %v", got, want)
	}
	if u := UIDs(want); !reflect.DeepEqual(u, []string{"a", "b"}) {
		t.Errorf("UIDs = %v", u)
	}
}
