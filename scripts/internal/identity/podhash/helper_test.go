package podhash

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// fakeHelper is a cmd/podhash stand-in: a shell script with the given body.
func fakeHelper(t *testing.T, body string) *Helper {
	t.Helper()
	path := filepath.Join(t.TempDir(), "podhash")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Helper{Release: &matrix.Release{Release: "1.9.11"}, Variant: matrix.Vanilla, Path: path}
}

func TestHelperHash(t *testing.T) {
	h := fakeHelper(t, `echo "$@" >&2; echo '{"pod":"ns/p","container":"c","hash":42}'`)
	h.Gates = "A=true"
	res, err := h.Hash(context.Background(), "pods.yaml", map[string]uint64{"ns/p/c": 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Key() != "ns/p/c" || res[0].Hash != 42 {
		t.Errorf("results %+v", res)
	}
}

func TestHelperBadInputIsErrBadInput(t *testing.T) {
	h := fakeHelper(t, `echo "podhash: pods.yaml: line 3: not a Pod" >&2; exit 2`)
	_, err := h.Hash(context.Background(), "pods.yaml", nil)
	if !errors.Is(err, ErrBadInput) || !strings.HasSuffix(err.Error(), ": pods.yaml: line 3: not a Pod") {
		t.Fatalf("err = %v, want ErrBadInput with the helper's message", err)
	}
	h = fakeHelper(t, `echo "podhash: crashed" >&2; exit 1`)
	_, err = h.Hash(context.Background(), "pods.yaml", nil)
	if err == nil || errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("err = %v, want a failure naming the helper's output", err)
	}
}
