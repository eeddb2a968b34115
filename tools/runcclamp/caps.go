package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// capNames maps capability numbers to the names OCI configs use
// (linux/capability.h).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// boundingSet reads this process's capability bounding set (CapBnd in
// /proc/self/status): runc, which we exec, can grant nothing outside it.
func boundingSet() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapBnd:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/self/status has no CapBnd line")
}

// clampCaps drops from every set of an OCI "capabilities" object the
// capabilities outside bnd. Docker's --privileged asks for all of them;
// on a machine (or in a node container) without CAP_SYS_RESOURCE runc then
// fails with "unable to apply caps" (dockerd 20.10 lacks moby#42933, which
// makes the same intersection). Names this table does not know are kept:
// runc judges those itself.
func clampCaps(raw json.RawMessage, bnd uint64) (json.RawMessage, bool, error) {
	var sets map[string]json.RawMessage
	if err := json.Unmarshal(raw, &sets); err != nil {
		return nil, false, fmt.Errorf("capabilities: %w", err)
	}
	allowed := map[string]bool{}
	known := map[string]bool{}
	for i, n := range capNames {
		known[n] = true
		allowed[n] = bnd&(1<<uint(i)) != 0
	}
	changed := false
	for name, v := range sets {
		if isNull(v) {
			continue
		}
		var caps []string
		if err := json.Unmarshal(v, &caps); err != nil {
			return nil, false, fmt.Errorf("capabilities.%s: %w", name, err)
		}
		kept := caps[:0:0]
		for _, c := range caps {
			if !known[c] || allowed[c] {
				kept = append(kept, c)
			}
		}
		if len(kept) == len(caps) {
			continue
		}
		b, err := json.Marshal(kept)
		if err != nil {
			return nil, false, err
		}
		sets[name] = b
		changed = true
	}
	if !changed {
		return raw, false, nil
	}
	out, err := json.Marshal(sets)
	return out, true, err
}
