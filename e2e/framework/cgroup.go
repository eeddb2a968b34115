package framework

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// A kubelet (cgroups-per-qos, cgroupfs driver) treats every pod cgroup
// under <cgroup-root>/kubepods whose pod it does not run as an orphan and
// SIGKILLs its processes. With the default root that is a cgroupfs
// dockershim node's production pods, whatever engine they run on. Each
// node therefore gets a cgroup root of its own (--cgroup-root, accepted by
// 1.7.5, 1.9.11 and 1.18.6), created before its first kubelet (they refuse
// a root that does not exist) and removed by Cleanup.

// cgroupMounts returns the mount points of the cgroup v1 hierarchies and
// of cgroup v2 (the unified hierarchy of a hybrid layout).
func cgroupMounts() (v1, v2 []string, err error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		switch g[0] {
		case "cgroup":
			v1 = append(v1, f[4])
		case "cgroup2":
			v2 = append(v2, f[4])
		}
	}
	return v1, v2, nil
}

// CreateCgroupRoot creates /name in every cgroup v1 hierarchy. A new cpuset
// cgroup starts with no CPUs and memory nodes: it gets its parent's.
func CreateCgroupRoot(name string) error {
	v1, _, err := cgroupMounts()
	if err != nil {
		return err
	}
	if len(v1) == 0 {
		return errors.New("no cgroup v1 hierarchy mounted (these kubelets need cgroup v1)")
	}
	for _, m := range v1 {
		dir := filepath.Join(m, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cgroup root: %w", err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(m, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("cgroup root: %w", err)
			}
		}
	}
	return nil
}

// RemoveCgroupRoot removes /name and everything below it (kubepods, the
// QoS and pod cgroups) from every hierarchy, deepest first. It fails for a
// cgroup that still has processes: nothing is killed here.
func RemoveCgroupRoot(name string) error {
	v1, v2, err := cgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range append(v1, v2...) {
		var dirs []string
		filepath.WalkDir(filepath.Join(m, name), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}
