package machine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Holder is a process that holds a directory (ProcessesUnder).
type Holder struct {
	PID int
	// Start is its start time (clock ticks after boot, /proc/PID/stat; 0
	// if unread): with the pid, what tells it from a later process given
	// the same pid.
	Start uint64
	Args  []string
}

// ProcessesUnder lists the processes of proc (normally /proc) that hold
// dir: their executable or working directory is at or below it, or their
// command line names it (our dockerd, containerd and shims, etcd, API
// servers, kubelets; builds working in it). Processes without a command
// line (kernel threads, zombies) and those in skip are not listed.
func ProcessesUnder(proc, dir string, skip map[int]bool) []Holder {
	dir = filepath.Clean(dir)
	under := func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	entries, _ := os.ReadDir(proc)
	var out []Holder
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		p := filepath.Join(proc, e.Name())
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone since the listing, or no command line
		}
		exe, _ := os.Readlink(filepath.Join(p, "exe"))
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if !strings.Contains(string(cmdline), dir) && !under(exe) && !under(cwd) {
			continue
		}
		h := Holder{PID: pid, Args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}
		if f := statFields(p); len(f) > 19 {
			h.Start, _ = strconv.ParseUint(f[19], 10, 64) // field 22: starttime
		}
		out = append(out, h)
	}
	return out
}

// Ancestors is this process and its parents up to pid 1, as proc
// (normally /proc) shows them: the caller of a check and what ran it.
func Ancestors(proc string) map[int]bool {
	out := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !out[pid]; {
		out[pid] = true
		f := statFields(filepath.Join(proc, strconv.Itoa(pid)))
		if len(f) < 2 {
			break
		}
		pid, _ = strconv.Atoi(f[1]) // ppid
	}
	return out
}

// statFields is /proc/PID/stat after "pid (comm) ": state, ppid, ...
// (comm may hold spaces and parentheses); nil if unreadable.
func statFields(p string) []string {
	b, err := os.ReadFile(filepath.Join(p, "stat"))
	if err != nil {
		return nil
	}
	stat := string(b)
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(stat[i+1:])
}
