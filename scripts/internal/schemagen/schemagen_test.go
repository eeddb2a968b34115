package schemagen

import (
	"strings"
	"testing"
)

const src = `package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Pod struct {
	metav1.TypeMeta
	Spec PodSpec
}

type PodSpec struct{ Containers []Container }

// Container is the root.
type Container struct {
	Name      string
	Resources ResourceRequirements
	Probe     *Probe
}

type ResourceRequirements struct{ Limits ResourceList }

type ResourceList map[ResourceName]resource.Quantity

type ResourceName string

type Probe struct {
	Handler
	PeriodSeconds int32
}

type Handler struct{ Exec *ExecAction }

type ExecAction struct{ Command []string }
`

func TestGenerateKeepsOnlyTheContainerGraph(t *testing.T) {
	out, err := Generate([]byte(src), "types.go", "generated")
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"package v1", "type Container struct", "type ResourceList map[ResourceName]resource.Quantity",
		"type Handler struct", "type ExecAction struct", `resource "k8s.io/apimachinery/pkg/api/resource"`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"type Pod ", "type PodSpec", "metav1", "is the root"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q, outside the Container graph:\n%s", unwanted, got)
		}
	}
	if n := TypeCount(out); n != 7 {
		t.Errorf("%d types, want 7", n)
	}
	// Field order is what go-spew prints: it must be the source's.
	if strings.Index(got, "Name ") > strings.Index(got, "Resources ") {
		t.Error("field order changed")
	}
}

func TestGenerateRejectsUnknownPackages(t *testing.T) {
	bad := strings.Replace(src, "resource.Quantity", "quantity.Quantity", 1)
	if _, err := Generate([]byte(bad), "types.go", ""); err == nil || !strings.Contains(err.Error(), "quantity") {
		t.Fatalf("got %v", err)
	}
}
