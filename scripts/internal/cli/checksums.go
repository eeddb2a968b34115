package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
)

// newChecksumsCmd makes verify-checksums, or update-checksums with update.
// update-checksums records, for each target built here, its binaries'
// sums in CHECKSUMS and the inputs they were built from in
// CHECKSUMS.inputs, together; a target built from other inputs than the
// checkout's is refused, naming them.
func newChecksumsCmd(s Streams, g *globals, update bool) *cobra.Command {
	var release string
	use, short := "verify-checksums", "Compare built kubelets and control planes with CHECKSUMS (expected and actual on a mismatch)"
	if update {
		use, short = "update-checksums", "Record the built kubelets' and control planes' sha256 in CHECKSUMS and the inputs they were built from in CHECKSUMS.inputs"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			path := filepath.Join(m.Root, checksums.FileName)
			want, err := checksums.Load(path)
			if err != nil {
				return err
			}
			recPath := filepath.Join(m.Root, checksums.InputsFileName)
			rec, err := checksums.LoadInputs(recPath)
			if err != nil {
				return err
			}
			releases := m.Names()
			if release != "" {
				releases = []string{release}
			}
			driver, err := build.DriverDigest(m.Root)
			if err != nil {
				return err
			}
			var keys, stale []string
			for _, name := range releases {
				r, err := m.Lookup(name)
				if err != nil {
					return err
				}
				o := build.Options{Matrix: m, Release: r}
				for _, t := range build.Targets(cmd.Context(), o) {
					var tkeys []string
					for _, out := range t.Outputs {
						tkeys = append(tkeys, checksums.KeyOf(m.OutputDir(), t.Paths.In(out.Name)))
					}
					keys = append(keys, tkeys...)
					if !update {
						continue
					}
					built, err := checksums.BuiltKeys(m.OutputDir(), tkeys)
					if err != nil {
						return err
					}
					if len(built) == 0 {
						continue
					}
					now, err := build.InputsOf(o, t, driver)
					if err != nil {
						return err
					}
					was, err := build.BuiltInputs(r, t)
					if err != nil {
						return err
					}
					if diff := now.Differ(was); len(diff) > 0 {
						stale = append(stale, fmt.Sprintf("%s (built from other %s than the checkout's)", build.TargetKey(r, t), strings.Join(diff, ", ")))
						continue
					}
					rec[build.TargetKey(r, t)] = now
				}
			}
			if len(stale) > 0 {
				return fmt.Errorf("not recorded, build them first (make kubelet, make control-plane, make conformance-suite): %s", strings.Join(stale, "; "))
			}
			built, err := checksums.BuiltKeys(m.OutputDir(), keys)
			if err != nil {
				return err
			}
			if !update {
				return want.Verify(built, s.Out)
			}
			want.Update(built, s.Out)
			if err := fsutil.WriteFileAtomic(path, want.Marshal(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "inputs recorded in %s\n", checksums.InputsFileName)
			return fsutil.WriteFileAtomic(recPath, rec.Marshal(), 0o644)
		},
	}
	cmd.Flags().StringVar(&release, "release", "", "only this release")
	return cmd
}
