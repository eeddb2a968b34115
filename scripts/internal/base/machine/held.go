package machine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
)

// Process is one process that holds something under the recorded
// directory (ProcessesUnder).
type Process struct {
	PID int `json:"pid"`
	// Start is its start time: with the pid, what tells a process from a
	// later one given its pid.
	Start uint64 `json:"start"`
	// Cmd is its command line, cut to 200 characters.
	Cmd string `json:"cmd"`
}

func (p Process) String() string { return fmt.Sprintf("pid %d (%s)", p.PID, p.Cmd) }

// ReadHeld records the processes and mounts under dir (a checkout's
// _output: every engine, kubelet, control plane and mount a suite makes is
// there), so a check after the suite can name what it left running or
// mounted. The caller and its ancestors (make, the toolchain itself) are
// not counted.
func (s *State) ReadHeld(procRoot, dir string) error {
	dir = filepath.Clean(dir)
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("machine: %s: want an absolute directory", dir)
	}
	mountinfo, err := os.ReadFile(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return err
	}
	s.Under, s.Processes, s.Mounts = dir, []Process{}, fsutil.MountsUnder(mountinfo, dir)
	for _, h := range ProcessesUnder(procRoot, dir, Ancestors(procRoot)) {
		line := strings.Join(h.Args, " ")
		if len(line) > 200 {
			line = line[:200] + "..."
		}
		s.Processes = append(s.Processes, Process{PID: h.PID, Start: h.Start, Cmd: line})
	}
	return nil
}

// leftovers lists what after holds under the directory that before did
// not: a process or mount a suite made and did not undo.
func leftovers(before, after *State) []Change {
	if after.Under == "" || before.Under != after.Under {
		return nil
	}
	var out []Change
	for _, p := range after.Processes {
		if !slices.ContainsFunc(before.Processes, func(q Process) bool { return q.PID == p.PID && q.Start == p.Start }) {
			out = append(out, Change{Key: "process " + p.String(), After: "still running under " + after.Under})
		}
	}
	for _, m := range after.Mounts {
		if !slices.Contains(before.Mounts, m) {
			out = append(out, Change{Key: "mount " + m, After: "still mounted"})
		}
	}
	return out
}
