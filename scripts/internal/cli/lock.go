package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/lock"
	"kubelet-toolchain/scripts/internal/matrix"
)

type lockFlags struct {
	release, seed, sourceZip string
	check                    bool
}

func newLockCmd(s Streams, g *globals) *cobra.Command {
	f := &lockFlags{}
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Regenerate a release's dependency lock from its tree, or --check the committed one",
		Long: `Resolves every dependency of the release's tree to a module version the
module proxy serves, verified by the checksum database, and writes the lock.
Candidates come from the committed lock, an optional --seed file of pins
found by hand, and Godeps tag comments. With --check nothing is written:
the command fails if the regenerated lock differs from the committed one.
--check without --release checks every release the proxy serves (all but
those with a stand-in).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.check && f.release == "" {
				m, err := g.loadMatrix()
				if err != nil {
					return err
				}
				var errs []error
				checkLocks(cmd.Context(), s, m, func(what string, err error) { errs = append(errs, fmt.Errorf("%s: %w", what, err)) })
				return errors.Join(errs...)
			}
			m, r, err := g.release(f.release)
			if err != nil {
				return err
			}
			o := lock.Options{Matrix: m, Release: r, Seed: f.seed, SourceZip: f.sourceZip, Log: s.Err}
			if f.check {
				return checkLock(cmd.Context(), s, o)
			}
			l, err := lock.Write(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "wrote %s (%s)\n", r.Lock(), l.Summary())
			return nil
		},
	}
	cmd.Flags().StringVar(&f.release, "release", "", "release, e.g. 1.9.11")
	cmd.Flags().StringVar(&f.seed, "seed", "", "JSON list of candidate pins {root, rev, module, version, how, recursive}")
	cmd.Flags().BoolVar(&f.check, "check", false, "verify the committed lock instead of writing it")
	cmd.Flags().StringVar(&f.sourceZip, "source-zip", "", "use this module zip instead of downloading the release")
	return cmd
}

func checkLock(ctx context.Context, s Streams, o lock.Options) error {
	l, err := lock.Check(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%s: ok (%s)\n", o.Release.Lock(), l.Summary())
	return nil
}

// checkLocks checks the lock of every release the proxy serves (a release
// with a stand-in is not downloadable here), calling fail for each failure.
func checkLocks(ctx context.Context, s Streams, m *matrix.Matrix, fail func(what string, err error)) {
	for i := range m.Releases {
		if r := &m.Releases[i]; r.StandIn == "" {
			if err := checkLock(ctx, s, lock.Options{Matrix: m, Release: r, Log: s.Err}); err != nil {
				fail("lock "+r.Lock(), err)
			}
		}
	}
}
