package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/identity/podhash"
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
	return podhash.BuildFor(ctx, m, r, v, s.Err)
}

// podFlags are the kubelet settings that change how a release decodes
// pods, shared by hash and preflight.
type podFlags struct {
	pods, source, nodeName, manifestPath, allowPrivileged, gates string
}

func (f *podFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.pods, "pods", "", "pods: a file (Pod, PodList or List; JSON or YAML, several documents) or, for static pods, a manifest directory")
	cmd.Flags().StringVar(&f.source, "source", podhash.SourceAPI, "api: pods as the API server sends them (kubectl get pods -o yaml); static: manifests as --pod-manifest-path reads them")
	cmd.Flags().StringVar(&f.nodeName, "node-name", "", "static: the node name (it enters static pod names and UIDs)")
	cmd.Flags().StringVar(&f.manifestPath, "pod-manifest-path", "", "static: where --pods lives on the node (it enters derived UIDs; default the --pods path)")
	cmd.Flags().StringVar(&f.allowPrivileged, "allow-privileged", "", "static: the kubelet's --allow-privileged, true or false (default: the release's default)")
	cmd.Flags().StringVar(&f.gates, "feature-gates", "", "the kubelet's --feature-gates")
}

func (f *podFlags) options() (podhash.Options, error) {
	if f.pods == "" {
		return podhash.Options{}, fmt.Errorf("no pods file given (PODS=...)")
	}
	if _, err := os.Stat(f.pods); err != nil {
		return podhash.Options{}, err
	}
	o := podhash.Options{Source: f.source, Gates: f.gates, NodeName: f.nodeName, ManifestPath: f.manifestPath}
	if f.source != podhash.SourceAPI && f.source != podhash.SourceStatic {
		return o, fmt.Errorf("source %q: use %s or %s", f.source, podhash.SourceAPI, podhash.SourceStatic)
	}
	switch f.allowPrivileged {
	case "":
	case "true", "false":
		b := f.allowPrivileged == "true"
		o.AllowPrivileged = &b
	default:
		return o, fmt.Errorf("allow-privileged %q: use true or false", f.allowPrivileged)
	}
	return o, nil
}

func newHashCmd(s Streams, g *globals) *cobra.Command {
	f := &buildFlags{}
	pf := &podFlags{}
	cmd := &cobra.Command{
		Use:   "hash",
		Short: "Print the container hash a kubelet build writes, for every container in a pods file",
		Long: `Prints "<namespace>/<pod>/<container> <hash>" for every container of every pod
(init containers first, then containers, in file order): the value that
release+variant writes in the container's hash label, computed by that
release's own decoding and HashContainer. A pod the release's kubelet would
refuse (static pods) is printed as "rejected: <reason>". Exit status 2 on a
file that cannot be read.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := pf.options()
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			v, err := parseVariant(f.variant)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			h, err := helper(cmd.Context(), s, g, f.release, v)
			if err != nil {
				return err
			}
			h.Options = opts
			res, err := h.Hash(cmd.Context(), pf.pods, nil)
			if err != nil {
				return badInput(err)
			}
			for _, r := range res {
				if r.Rejected != "" {
					fmt.Fprintf(s.Out, "%s rejected: %s\n", r.Key(), r.Rejected)
					continue
				}
				fmt.Fprintf(s.Out, "%s %d\n", r.Key(), r.Hash)
			}
			return nil
		},
	}
	f.register(cmd.Flags(), "release")
	pf.register(cmd)
	return cmd
}

func newPreflightCmd(s Streams, g *globals) *cobra.Command {
	var from, to, format string
	pf := &podFlags{}
	run := &podhash.PreflightRun{Log: s.Err}
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Which containers would switching kubelet FROM -> TO recreate? (vanilla and patched TO)",
		Long: `For every container in the pods file: the hash the FROM kubelet wrote (or,
with --docker-endpoint, the hash label the running container carries), what
TO vanilla and TO patched compute, and whether each keeps the container.
Init containers are never hash-compared by the kubelet ("not compared").
For static pods without metadata.uid it also shows the UID each release
derives. Exit status 0 if the patched TO keeps everything, 1 if it would
recreate or refuse something, 2 on error.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := preflight(cmd.Context(), g, pf, run, from, to)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			switch format {
			case "json":
				err = rep.WriteJSON(s.Out)
			case "table":
				rep.WriteTable(s.Out)
			default:
				return &ExitError{Code: 2, Err: fmt.Errorf("FORMAT=%q: use table or json", format)}
			}
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if rep.Failed() {
				return &ExitError{Code: 1, Err: fmt.Errorf("the patched %s would recreate %d containers and refuse %d", to, rep.Recreating, rep.Rejecting)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "release the node runs now (optional with --docker-endpoint)")
	cmd.Flags().StringVar((*string)(&run.FromVariant), "from-variant", string(matrix.Vanilla), "variant the node runs now: vanilla, or patched for a rollback")
	cmd.Flags().StringVar(&to, "to", "", "release to switch to")
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.Flags().StringVar(&run.Endpoint, "docker-endpoint", "", "a live node's Docker endpoint (unix:///var/run/docker.sock): judge the hashes its running containers carry (read-only)")
	pf.register(cmd)
	return cmd
}

// preflight fills in the releases, pods and decoding options, and runs it.
func preflight(ctx context.Context, g *globals, pf *podFlags, run *podhash.PreflightRun, from, to string) (*podhash.Report, error) {
	var err error
	if run.Options, err = pf.options(); err != nil {
		return nil, err
	}
	if to == "" || (from == "" && run.Endpoint == "") {
		return nil, fmt.Errorf("give TO=... and FROM=... (or NODE=<docker endpoint>)")
	}
	if run.FromVariant, err = parseVariant(string(run.FromVariant)); err != nil {
		return nil, err
	}
	if run.Matrix, err = g.loadMatrix(); err != nil {
		return nil, err
	}
	if from != "" {
		if run.From, err = run.Matrix.Lookup(from); err != nil {
			return nil, err
		}
	}
	if run.To, err = run.Matrix.Lookup(to); err != nil {
		return nil, err
	}
	run.Pods = pf.pods
	return run.Run(ctx)
}
