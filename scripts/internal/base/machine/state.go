// Package machine records the kernel settings of the machine the toolchain
// runs on (every readable /proc/sys entry and the loaded modules) and
// compares two records: `make test`, `make e2e` and `make rehearsal` must
// leave the machine as they found it. Kubelets and kube-proxy write
// vm.overcommit_memory, kernel.panic & co at start; ours see shadow files
// instead (scripts/node/shadow-sysctls.sh), and this is the check that a
// write reaching the machine does not go unnoticed. A record can also hold
// what runs or is mounted under a checkout's _output (held.go): a suite
// must stop and unmount what it started there.
package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// State is one record of the machine's kernel settings.
type State struct {
	// Sysctls maps a path under /proc/sys ("vm/overcommit_memory") to its
	// value, for every entry readable at the time.
	Sysctls map[string]string `json:"sysctls"`
	// Modules lists the loaded modules; nil when the kernel has no module
	// support (no /proc/modules: everything is built in).
	Modules []string `json:"modules"`
	// Under, when set, is the directory whose processes and mounts were
	// recorded too (ReadHeld): what a suite leaves there is a change.
	Under     string    `json:"under,omitempty"`
	Processes []Process `json:"processes,omitempty"`
	Mounts    []string  `json:"mounts,omitempty"`
}

// Read records the kernel settings under procRoot (normally "/proc").
func Read(procRoot string) (*State, error) {
	s := &State{Sysctls: map[string]string{}}
	root := filepath.Join(procRoot, "sys")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // a directory that vanished or is not ours to read
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if volatile(rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil // write-only entries (vm/drop_caches) and the like
		}
		s.Sysctls[rel] = strings.TrimSpace(string(b))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", root, err)
	}
	mods, err := os.ReadFile(filepath.Join(procRoot, "modules"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		s.Modules = []string{}
		for _, l := range strings.Split(string(mods), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				s.Modules = append(s.Modules, f[0])
			}
		}
		sort.Strings(s.Modules)
	}
	return s, nil
}

// volatileEntries move on their own (counters, random values, state of
// whatever runs): comparing them would report every run.
var volatileEntries = regexp.MustCompile(`^(` + strings.Join([]string{
	`fs/(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota/.*)`,
	`fs/binfmt_misc/.*`,
	`kernel/random/(entropy_avail|uuid|boot_id)`,
	`kernel/(ns_last_pid|pty/nr|tainted)`,
	`net/netfilter/nf_conntrack_count`,
	`vm/(nr_pdflush_threads|stat_refresh)`,
}, "|") + `)$`)

func volatile(rel string) bool { return volatileEntries.MatchString(rel) }

// interfaceEntry matches the per-interface subtrees: an interface that
// comes or goes (a container's veth, the engines' own bridges) adds or
// removes them; only interfaces present in both records are compared.
var interfaceEntry = regexp.MustCompile(`^net/ipv[46]/(conf|neigh)/([^/]+)/`)

// Change is one difference between two records.
type Change struct {
	Key, Before, After string
}

func (c Change) String() string {
	switch {
	case c.Before == "" && c.After != "":
		return fmt.Sprintf("%s: appeared (%s)", c.Key, c.After)
	case c.After == "" && c.Before != "":
		return fmt.Sprintf("%s: gone (was %s)", c.Key, c.Before)
	}
	return fmt.Sprintf("%s: %s -> %s", c.Key, c.Before, c.After)
}

// Compare lists what differs from before to after, less what the allowed
// entries state as requirements ("<sysctl path>" or "module <name>").
func Compare(before, after *State, allowed []string) []Change {
	ifaces := func(s *State) map[string]bool {
		m := map[string]bool{}
		for k := range s.Sysctls {
			if g := interfaceEntry.FindStringSubmatch(k); g != nil {
				m[g[2]] = true
			}
		}
		return m
	}
	inBefore, inAfter := ifaces(before), ifaces(after)
	skip := func(k string) bool {
		if slices.Contains(allowed, k) {
			return true
		}
		g := interfaceEntry.FindStringSubmatch(k)
		return g != nil && !(inBefore[g[2]] && inAfter[g[2]])
	}
	var out []Change
	for k, b := range before.Sysctls {
		a, ok := after.Sysctls[k]
		if skip(k) || (ok && a == b) {
			continue
		}
		out = append(out, Change{Key: k, Before: b, After: a})
	}
	for k, a := range after.Sysctls {
		if _, ok := before.Sysctls[k]; !ok && !skip(k) {
			out = append(out, Change{Key: k, After: a})
		}
	}
	if before.Modules != nil && after.Modules != nil {
		for _, m := range after.Modules {
			if !slices.Contains(before.Modules, m) && !slices.Contains(allowed, "module "+m) {
				out = append(out, Change{Key: "module " + m, Before: "", After: "loaded"})
			}
		}
		for _, m := range before.Modules {
			if !slices.Contains(after.Modules, m) {
				out = append(out, Change{Key: "module " + m, Before: "loaded", After: ""})
			}
		}
	}
	out = append(out, leftovers(before, after)...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Save writes the record to path (JSON).
func (s *State) Save(path string) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Load reads a record Save wrote.
func Load(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &State{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
