// Package testtool checks, for the toolchain's tests, that the tools a test
// runs are installed. A missing tool fails the test: scripts/prereqs.sh
// (which make test runs first) installs every one of them, so a skip would
// only hide a test that did not run.
package testtool

import (
	"os/exec"
	"testing"
)

// packages names the Debian package scripts/prereqs.sh installs for a tool.
var packages = map[string]string{
	"dpkg":        "dpkg",
	"dpkg-deb":    "dpkg",
	"dpkg-query":  "dpkg",
	"dpkg-source": "dpkg-dev",
	"rpm":         "rpm",
	"rpmbuild":    "rpm",
	"patch":       "patch",
	"git":         "git",
	"diff":        "diffutils",
}

// Need fails the test unless every tool is on PATH.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if tool == "go" {
				t.Fatalf("go is not on PATH: scripts/prereqs.sh requires it")
			}
			pkg := packages[tool]
			if pkg == "" {
				pkg = "its package"
			}
			t.Fatalf("%s is not installed (%v): scripts/prereqs.sh installs it (Debian package %s)", tool, err, pkg)
		}
	}
}
