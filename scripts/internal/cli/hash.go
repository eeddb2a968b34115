package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/build"
	"kubelet-toolchain/scripts/internal/matrix"
	"kubelet-toolchain/scripts/internal/podhash"
)

// ExitError carries a process exit status other than 1.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the status main should exit with for err.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// badInput turns a refused pods file into exit status 2.
func badInput(err error) error {
	if errors.Is(err, podhash.ErrBadInput) {
		return &ExitError{Code: 2, Err: err}
	}
	return err
}

// helper builds (or reuses) cmd/podhash of a release+variant.
func helper(ctx context.Context, s Streams, g *globals, release string, v matrix.Variant) (*podhash.Helper, error) {
	m, r, err := g.release(release)
	if err != nil {
		return nil, &ExitError{Code: 2, Err: err}
	}
	return podhash.Build(ctx, build.Options{Matrix: m, Release: r, Variant: v, OutputDir: m.OutputDir(), Log: s.Err})
}

func checkPodsFile(path string) error {
	if path == "" {
		return &ExitError{Code: 2, Err: fmt.Errorf("no pods file given (PODS=...)")}
	}
	if _, err := os.Stat(path); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	return nil
}

func newHashCmd(s Streams, g *globals) *cobra.Command {
	var release, variant, pods string
	cmd := &cobra.Command{
		Use:   "hash",
		Short: "Print the container hash a kubelet build writes, for every container in a pods file",
		Long: `Prints "<namespace>/<pod>/<container> <hash>" for every container of every pod
(init containers first, then containers, in file order): the value that
release+variant writes in the container's hash label, computed by that
release's own decoding and HashContainer. Exit status 2 on a bad file.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPodsFile(pods); err != nil {
				return err
			}
			v, err := parseVariant(variant)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			h, err := helper(cmd.Context(), s, g, release, v)
			if err != nil {
				return err
			}
			res, err := h.Hash(cmd.Context(), pods, nil)
			if err != nil {
				return badInput(err)
			}
			for _, r := range res {
				fmt.Fprintf(s.Out, "%s %d\n", r.Key(), r.Hash)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&release, "release", "", "release, e.g. 1.9.11")
	cmd.Flags().StringVar(&variant, "variant", "patched", "patched or vanilla")
	cmd.Flags().StringVar(&pods, "pods", "", "Pod, PodList or List file (JSON or YAML, several documents allowed)")
	return cmd
}

func newPreflightCmd(s Streams, g *globals) *cobra.Command {
	var from, to, pods, format string
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Which containers would switching kubelet FROM -> TO recreate? (vanilla and patched TO)",
		Long: `For every container in the pods file: the hash the FROM kubelet (vanilla)
wrote, what TO vanilla and TO patched compute and whether they accept it
(kept / recreated); for pods without metadata.uid also the static pod UID
each release derives. Exit status 0 if the patched TO recreates nothing,
1 if it would, 2 on error.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPodsFile(pods); err != nil {
				return err
			}
			if format != "table" && format != "json" {
				return &ExitError{Code: 2, Err: fmt.Errorf("FORMAT=%q: use table or json", format)}
			}
			ctx := cmd.Context()
			var results [3][]podhash.Result
			var stored map[string]uint64
			for i, step := range []struct {
				release string
				v       matrix.Variant
			}{{from, matrix.Vanilla}, {to, matrix.Vanilla}, {to, matrix.Patched}} {
				h, err := helper(ctx, s, g, step.release, step.v)
				if err != nil {
					return &ExitError{Code: 2, Err: err}
				}
				if results[i], err = h.Hash(ctx, pods, stored); err != nil {
					return &ExitError{Code: 2, Err: err}
				}
				if i == 0 {
					stored = map[string]uint64{}
					for _, r := range results[0] {
						stored[r.Key()] = r.Hash
					}
				}
			}
			rep, err := podhash.Preflight(from, to, results[0], results[1], results[2])
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if format == "json" {
				err = rep.WriteJSON(s.Out)
			} else {
				rep.WriteTable(s.Out)
			}
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if rep.Recreating > 0 {
				return &ExitError{Code: 1, Err: fmt.Errorf("the patched %s would recreate %d containers", to, rep.Recreating)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "release the node runs now (vanilla)")
	cmd.Flags().StringVar(&to, "to", "", "release to switch to")
	cmd.Flags().StringVar(&pods, "pods", "", "Pod, PodList or List file (JSON or YAML)")
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	return cmd
}
