// Command runcclamp is a runc wrapper for machines without CAP_SYS_RESOURCE.
//
// There a negative oom_score_adj (kubelet asks -998 for sandboxes) makes
// runc init fail with "can't get final child's PID from pipe: EOF", and a
// privileged container (every capability) fails with "unable to apply
// caps". The wrapper raises process.oomScoreAdj to 0 and intersects every
// capability set with its own bounding set, in the OCI bundle's
// config.json (create/run) or in the process JSON (exec), then execs the
// real runc with the unchanged argv. engine-up.sh registers it with dockerd
// only when the machine needs it; the rehearsal's nodes run it inside too.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const realRunc = "/usr/bin/runc"

// Global runc flags that take a value; needed to find the subcommand.
var globalValueFlags = map[string]bool{
	"root": true, "log": true, "log-format": true, "criu": true, "rootless": true,
}

func main() {
	if err := clampArgs(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "runcclamp: %v\n", err)
		os.Exit(1)
	}
	argv := append([]string{realRunc}, os.Args[1:]...)
	if err := syscall.Exec(realRunc, argv, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "runcclamp: exec %s: %v\n", realRunc, err)
		os.Exit(1)
	}
}

// clampArgs rewrites the JSON file the runc invocation will read, if any.
func clampArgs(args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "create", "run":
		bundle := flagValue(rest, "bundle", "b")
		if bundle == "" {
			bundle = "." // runc's default: the current directory
		}
		return clampFile(filepath.Join(bundle, "config.json"), true)
	case "exec":
		if p := flagValue(rest, "process", "p"); p != "" {
			return clampFile(p, false)
		}
	}
	return nil
}

// subcommand returns the first non-flag argument and the arguments after it.
func subcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			return a, args[i+1:]
		}
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && globalValueFlags[name] {
			i++ // skip the flag's value
		}
	}
	return "", nil
}

// Flags of create/run/exec that take a value: their value is not the
// first positional argument (the container id), where flag parsing stops.
var subValueFlags = map[string]bool{
	"bundle": true, "b": true, "console-socket": true, "pid-file": true,
	"preserve-fds": true, "process": true, "p": true, "cwd": true,
	"env": true, "e": true, "user": true, "u": true, "additional-gids": true,
	"g": true, "apparmor": true, "process-label": true, "cap": true, "c": true,
	"cgroup": true,
}

// flagValue finds --long X, --long=X, -short X or -short=X (urfave/cli
// accepts one or two dashes for either name) before the first positional
// argument, as runc's own parser does; later words belong to the command.
func flagValue(args []string, long, short string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return ""
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == long || name == short {
			if hasVal {
				return val
			}
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if !hasVal && subValueFlags[name] {
			i++
		}
	}
	return ""
}

func clampFile(path string, inProcess bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	bnd, err := boundingSet()
	if err != nil {
		return err
	}
	out, changed, err := clamp(data, inProcess, bnd)
	if err != nil || !changed {
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	// Write beside the original and rename, so runc never reads half a file.
	tmp := path + ".runcclamp.tmp"
	if err := os.WriteFile(tmp, out, st.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// clamp raises a negative oomScoreAdj to 0 and drops capabilities outside
// bnd. With inProcess it looks in the "process" object of an OCI
// config.json, otherwise at the top level of a process JSON (runc exec
// --process). Every other field is kept as raw JSON.
func clamp(data []byte, inProcess bool, bnd uint64) ([]byte, bool, error) {
	if !inProcess {
		return clampObject(data, bnd)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, false, err
	}
	proc, ok := cfg["process"]
	if !ok || isNull(proc) {
		return data, false, nil
	}
	newProc, changed, err := clampObject(proc, bnd)
	if err != nil || !changed {
		return data, false, err
	}
	cfg["process"] = newProc
	out, err := json.Marshal(cfg)
	return out, true, err
}

func clampObject(data []byte, bnd uint64) ([]byte, bool, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, false, err
	}
	changed := false
	if raw, ok := obj["oomScoreAdj"]; ok && !isNull(raw) {
		var adj int
		if err := json.Unmarshal(raw, &adj); err != nil {
			return nil, false, fmt.Errorf("oomScoreAdj: %w", err)
		}
		if adj < 0 {
			obj["oomScoreAdj"] = json.RawMessage("0")
			changed = true
		}
	}
	if raw, ok := obj["capabilities"]; ok && !isNull(raw) {
		caps, c, err := clampCaps(raw, bnd)
		if err != nil {
			return nil, false, err
		}
		if c {
			obj["capabilities"] = caps
			changed = true
		}
	}
	if !changed {
		return data, false, nil
	}
	out, err := json.Marshal(obj)
	return out, true, err
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
