package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// RepoRoot finds the repository root (the directory holding versions.yaml)
// upwards from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "versions.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no versions.yaml above the working directory")
		}
		dir = parent
	}
}

// Release is what the suites need of a versions.yaml entry.
type Release struct {
	Release    string `json:"release"`
	PauseImage string `json:"pauseImage"`
}

// LoadRelease reads one release of versions.yaml.
func LoadRelease(root, name string) (*Release, error) {
	data, err := os.ReadFile(filepath.Join(root, "versions.yaml"))
	if err != nil {
		return nil, err
	}
	var m struct {
		Releases []Release `json:"releases"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	for _, r := range m.Releases {
		if r.Release == name {
			return &r, nil
		}
	}
	return nil, fmt.Errorf("release %s is not in versions.yaml", name)
}

// KubeletBinary is where `make kubelet` puts a release+variant binary.
func KubeletBinary(root, release, variant string) string {
	return filepath.Join(root, "_output", release, variant, "bin", "linux", "amd64", "kubelet")
}

// ShimBinary is ShimRelease's dockershim of variant (make dockershim).
func ShimBinary(root, variant string) string {
	return filepath.Join(filepath.Dir(KubeletBinary(root, ShimRelease, variant)), "dockershim")
}

// ShadowScript runs a kubelet with the kernel settings it writes kept off
// the machine (scripts/node/shadow-sysctls.sh).
func ShadowScript(root string) string {
	return filepath.Join(root, "scripts", "node", "shadow-sysctls.sh")
}
