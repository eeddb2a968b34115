package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/build"
	"kubelet-toolchain/scripts/internal/checksums"
	"kubelet-toolchain/scripts/internal/fsutil"
	"kubelet-toolchain/scripts/internal/matrix"
)

// newChecksumsCmd makes verify-checksums, or update-checksums with update.
func newChecksumsCmd(s Streams, g *globals, update bool) *cobra.Command {
	var release string
	use, short := "verify-checksums", "Compare built kubelets with CHECKSUMS (expected and actual on a mismatch)"
	if update {
		use, short = "update-checksums", "Record the built kubelets' sha256 in CHECKSUMS"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(*cobra.Command, []string) error {
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			path := filepath.Join(m.Root, "CHECKSUMS")
			want, err := checksums.Load(path)
			if err != nil {
				return err
			}
			var failed []string
			checked := 0
			for _, r := range m.Releases {
				if release != "" && r.Release != release {
					continue
				}
				for _, v := range matrix.Variants {
					key := checksums.Key(r.Release, string(v))
					got, err := build.FileSHA256(build.PathsFor(m.OutputDir(), r.Release, v).Binary)
					if errors.Is(err, os.ErrNotExist) {
						continue // not built here
					} else if err != nil {
						return err
					}
					checked++
					if update {
						want[key] = got
						fmt.Fprintf(s.Out, "%s  %s\n", got, key)
						continue
					}
					switch exp, ok := want[key]; {
					case !ok:
						failed = append(failed, fmt.Sprintf("%s: no expected checksum\n  actual   %s", key, got))
					case exp != got:
						failed = append(failed, fmt.Sprintf("%s: MISMATCH\n  expected %s\n  actual   %s", key, exp, got))
					default:
						fmt.Fprintf(s.Out, "ok  %s  %s\n", got, key)
					}
				}
			}
			if update {
				return fsutil.WriteFileAtomic(path, want.Marshal(), 0o644)
			}
			for _, f := range failed {
				fmt.Fprintln(s.Out, f)
			}
			if checked == 0 {
				return fmt.Errorf("no built kubelet under _output/ to check (make kubelet first)")
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d kubelets do not match CHECKSUMS; update it only if a pin, patch, flag or toolchain changed on purpose", len(failed), checked)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&release, "release", "", "only this release")
	return cmd
}
