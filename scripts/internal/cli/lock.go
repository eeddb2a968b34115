package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
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
// The checks run side by side: on a fresh machine each one waits on
// downloads (the release's zip, every module its lock names, the checksum
// database), one after another they took 9 minutes with the cores idle.
// Each check's output is kept and printed in the matrix's order.
func checkLocks(ctx context.Context, s Streams, m *matrix.Matrix, fail func(what string, err error)) {
	type result struct {
		out, log bytes.Buffer
		err      error
	}
	var rs []*matrix.Release
	for i := range m.Releases {
		if r := &m.Releases[i]; r.StandIn == "" {
			rs = append(rs, r)
		}
	}
	results := make([]result, len(rs))
	var g errgroup.Group
	g.SetLimit(lockChecksAtOnce)
	for i, r := range rs {
		g.Go(func() error {
			res := &results[i]
			res.err = checkLock(ctx, Streams{Out: &res.out, Err: &res.log}, lock.Options{Matrix: m, Release: r, Log: &res.log})
			return nil
		})
	}
	g.Wait()
	for i, r := range rs {
		s.Err.Write(results[i].log.Bytes())
		s.Out.Write(results[i].out.Bytes())
		if err := results[i].err; err != nil {
			fail("lock "+r.Lock(), err)
		}
	}
}

// lockChecksAtOnce bounds the side-by-side lock checks: each holds an
// unpacked tree and, in the modules era, a go mod vendor.
const lockChecksAtOnce = 4
