package machine

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Process is one process that holds something under the recorded
// directory: its executable, working directory or an argument is there.
type Process struct {
	PID int `json:"pid"`
	// Start is its start time (clock ticks after boot, /proc/PID/stat):
	// with the pid, what tells a process from a later one given its pid.
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
	s.Under, s.Processes, s.Mounts = dir, []Process{}, []string{}
	under := func(v string) bool { return v == dir || strings.Contains(v, dir+"/") }
	skip := ancestors(procRoot)
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		p := filepath.Join(procRoot, e.Name())
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue // gone since the listing
		}
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		exe, _ := os.Readlink(filepath.Join(p, "exe"))
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if !under(exe) && !under(cwd) && !slices.ContainsFunc(args, under) {
			continue
		}
		line := strings.Join(args, " ")
		if len(line) > 200 {
			line = line[:200] + "..."
		}
		s.Processes = append(s.Processes, Process{PID: pid, Start: startTime(p), Cmd: line})
	}
	mounts, err := os.Open(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return err
	}
	defer mounts.Close()
	sc := bufio.NewScanner(mounts)
	for sc.Scan() {
		// The fifth field is the mount point, with space, tab, newline and
		// backslash octal-escaped.
		if f := strings.Fields(sc.Text()); len(f) > 4 {
			if m := unescapeMount(f[4]); under(m) {
				s.Mounts = append(s.Mounts, m)
			}
		}
	}
	return sc.Err()
}

// ancestors is this process and its parents, up to pid 1.
func ancestors(procRoot string) map[int]bool {
	out := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !out[pid]; {
		out[pid] = true
		b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
		if err != nil {
			break
		}
		f := statFields(string(b))
		if len(f) < 2 {
			break
		}
		pid, _ = strconv.Atoi(f[1]) // ppid
	}
	return out
}

// statFields is /proc/PID/stat after "pid (comm) ": state, ppid, ...
// (comm may hold spaces and parentheses).
func statFields(stat string) []string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(stat[i+1:])
}

func startTime(p string) uint64 {
	b, err := os.ReadFile(filepath.Join(p, "stat"))
	if err != nil {
		return 0
	}
	if f := statFields(string(b)); len(f) > 19 {
		t, _ := strconv.ParseUint(f[19], 10, 64) // field 22: starttime
		return t
	}
	return 0
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
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
