package cli

import (
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
	use, short := "verify-checksums", "Compare built kubelets and control planes with CHECKSUMS (expected and actual on a mismatch)"
	if update {
		use, short = "update-checksums", "Record the built kubelets' and control planes' sha256 in CHECKSUMS"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(*cobra.Command, []string) error {
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
			built, err := checksums.Built(m.OutputDir(), releases, variantNames())
			if err != nil {
				return err
			}
			cp, err := checksums.BuiltControlPlane(m.OutputDir(), releases, controlPlaneNames())
			if err != nil {
				return err
			}
			built = append(built, cp...)
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

func controlPlaneNames() []string {
	var out []string
	for _, c := range build.ControlPlaneCommands {
		out = append(out, c.Name)
	}
	return out
}

func variantNames() []string {
	var out []string
	for _, v := range matrix.Variants {
		out = append(out, string(v))
	}
	return out
}
