// Package testfile holds the file helpers the toolchain's tests share.
package testfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write creates path (and its parent directories) with data, failing the
// test on any error.
func Write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
