package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
)

// newChecksumsCmd makes verify-checksums, or update-checksums with update.
func newChecksumsCmd(s Streams, g *globals, update bool) *cobra.Command {
	var release string
	use, short := "verify-checksums", "Compare built kubelets and control planes with CHECKSUMS (expected and actual on a mismatch)"
	if update {
		use, short = "update-checksums", "Record the built kubelets' and control planes' sha256 in CHECKSUMS"
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
			releases := m.Names()
			if release != "" {
				releases = []string{release}
			}
			var keys []string
			for _, name := range releases {
				r, err := m.Lookup(name)
				if err != nil {
					return err
				}
				for _, t := range build.Targets(cmd.Context(), build.Options{Matrix: m, Release: r}) {
					for _, out := range t.Outputs {
						keys = append(keys, checksums.KeyOf(m.OutputDir(), t.Paths.In(out.Name)))
					}
				}
			}
			built, err := checksums.BuiltKeys(m.OutputDir(), keys)
			if err != nil {
				return err
			}
			if !update {
				return want.Verify(built, s.Out)
			}
			want.Update(built, s.Out)
			return fsutil.WriteFileAtomic(path, want.Marshal(), 0o644)
		},
	}
	cmd.Flags().StringVar(&release, "release", "", "only this release")
	return cmd
}
