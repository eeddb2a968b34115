package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/machine"
)

func newCleanCmd(s Streams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "clean",
		Short: "Remove _output/ (trees, binaries); refused while anything under it is mounted or an engine, kubelet or control plane of ours runs from it",
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := filepath.Abs(g.root)
			if err != nil {
				return err
			}
			out := filepath.Join(root, "_output")
			info, err := os.ReadFile("/proc/self/mountinfo")
			if err != nil {
				return err
			}
			if err := cleanable(out, info, "/proc"); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			// Trees hold read-only module files.
			filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(path, 0o755)
				}
				return nil
			})
			if err := os.RemoveAll(out); err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "removed %s\n", out)
			return nil
		},
	}
}

// cleanable refuses to remove out while something lives in it: a mount
// point at or below it (deleting through a kubelet's bind mounts reaches
// the files they expose), or a live process running from, working in or
// naming it (machine.ProcessesUnder: our dockerd, containerd, etcd, API
// server, kubelets, and builds: go, compile, link).
func cleanable(out string, mountinfo []byte, proc string) error {
	var problems []string
	if mounts := fsutil.MountsUnder(mountinfo, out); len(mounts) > 0 {
		shown := mounts
		if len(shown) > 5 {
			shown = shown[:5]
		}
		problems = append(problems, fmt.Sprintf("%d mounts under it (%s); make rehearsal-down and tools/engine-down.sh remove ours", len(mounts), strings.Join(shown, ", ")))
	}
	var procs []string
	for _, h := range machine.ProcessesUnder(proc, out, map[int]bool{os.Getpid(): true}) {
		procs = append(procs, fmt.Sprintf("pid %d (%s)", h.PID, filepath.Base(h.Args[0])))
	}
	if len(procs) > 0 {
		shown := procs
		if len(shown) > 8 {
			shown = append(shown[:8:8], fmt.Sprintf("%d more", len(procs)-8))
		}
		problems = append(problems, fmt.Sprintf("%d processes run from it: %s", len(procs), strings.Join(shown, ", ")))
	}
	if len(problems) > 0 {
		return errors.New("refusing to remove " + out + ":\n  " + strings.Join(problems, "\n  ") + "\nstop them first (a build or test still running: let it end; make rehearsal-down; tools/engine-down.sh), then make clean")
	}
	return nil
}
