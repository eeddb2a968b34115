package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/rehearsal"
	"kubelet-toolchain/scripts/internal/pipeline/build"
)

// rehearsalFlags are shared by rehearsal run, up and down.
type rehearsalFlags struct {
	from, to, variant, manifests, images string
	faults                               string
	nodes, instance                      int
	bridge, bridgeCIDR                   string
	settle                               time.Duration
}

// layout is the instance's layout for the repository at root.
func (f *rehearsalFlags) layout(root string) (rehearsal.Layout, error) {
	if err := rehearsal.CheckInstance(f.instance); err != nil {
		return rehearsal.Layout{}, err
	}
	return rehearsal.NewLayoutFor(root, f.instance), nil
}

// network is the instance's bridge and subnet, unless the flags set them.
func (f *rehearsalFlags) network(l rehearsal.Layout) rehearsal.Network {
	nw := l.DefaultNetwork()
	if f.bridge != "" {
		nw.Bridge = f.bridge
	}
	if f.bridgeCIDR != "" {
		nw.CIDR = f.bridgeCIDR
	}
	return nw
}

func newRehearsalCmd(s Streams, g *globals) *cobra.Command {
	f := &rehearsalFlags{}
	cmd := &cobra.Command{
		Use:   "rehearsal",
		Short: "Upgrade rehearsal on kind-style nodes: a real control plane, nodes as containers, pods through the API",
	}
	cmd.PersistentFlags().IntVar(&f.instance, "instance", 0, fmt.Sprintf("which of the machine's rehearsals, 0..%d: each has its own _output/rehearsal[-N], engine, bridge kubelet-rhN, subnet and control plane ports, so instances run side by side", rehearsal.MaxInstance))
	cmd.PersistentFlags().StringVar(&f.bridge, "bridge", envOr("REHEARSAL_BRIDGE", ""), "the rehearsal engine's bridge (env REHEARSAL_BRIDGE; default kubelet-rhN)")
	cmd.PersistentFlags().StringVar(&f.bridgeCIDR, "bridge-cidr", envOr("REHEARSAL_BRIDGE_CIDR", ""), "the bridge's address; the API server listens on it (env REHEARSAL_BRIDGE_CIDR; default 198.18.202.1/24 for instance 0, 198.18.<220+N>.1/24 for N)")

	// up checks every input before anything is built or started.
	up := func(cmd *cobra.Command, withTo bool) (rehearsal.UpOptions, *matrix.Release, matrix.Variant, error) {
		var o rehearsal.UpOptions
		bad := func(err error) (rehearsal.UpOptions, *matrix.Release, matrix.Variant, error) {
			return o, nil, "", &ExitError{Code: 2, Err: err}
		}
		if err := rehearsal.CheckNodes(f.nodes); err != nil {
			return bad(err)
		}
		if err := rehearsal.CheckInstance(f.instance); err != nil {
			return bad(err)
		}
		m, from, err := g.release(f.from)
		if err != nil {
			return bad(fmt.Errorf("FROM: %w", err))
		}
		l := rehearsal.NewLayoutFor(m.Root, f.instance)
		kubelets := map[string]*matrix.Release{"FROM": from}
		var to *matrix.Release
		var v matrix.Variant
		if withTo {
			if to, err = m.Lookup(f.to); err != nil || f.to == "" {
				return bad(fmt.Errorf("TO=%q: %v (supported: %v)", f.to, err, m.Names()))
			}
			kubelets["TO"] = to
		}
		cp, err := rehearsal.ControlPlaneFor(m, kubelets)
		if err != nil {
			return bad(err)
		}
		if withTo {
			if v, err = parseVariant(f.variant); err != nil {
				return bad(err)
			}
			if f.manifests != "" {
				if err := rehearsal.CheckManifests(f.manifests, cp); err != nil {
					return bad(err)
				}
			}
			if _, err := rehearsal.ParseFaults(f.faults); err != nil {
				return bad(err)
			}
			if err := rehearsal.CheckImageFiles(strings.Fields(f.images)); err != nil {
				return bad(err)
			}
			found := l.ImageOnEngines(cmd.Context())
			if err := rehearsal.CheckImagesFound(strings.Fields(f.images), found); err != nil {
				return bad(err)
			}
		}
		unlock, err := rehearsal.LockMachine(l, cmd.CommandPath())
		if err != nil {
			return bad(err)
		}
		cobra.OnFinalize(unlock)
		cpBin, err := controlPlaneBin(cmd.Context(), s, m, cp)
		if err != nil {
			return o, nil, "", &ExitError{Code: 2, Err: err}
		}
		o = rehearsal.UpOptions{Matrix: m, Instance: l.Instance, From: from, Nodes: f.nodes, Network: f.network(l), ControlPlane: cp, ControlPlaneBin: cpBin, Log: s.Err}
		return o, to, v, nil
	}

	run := &cobra.Command{
		Use:   "run",
		Short: "Bring the cluster up (or reuse it), apply the workloads, switch every node's kubelet FROM -> TO -> FROM -> TO, report every pod",
		Long: `Writes _output/rehearsal/report.json, junit.xml and the components' logs.
Exit status: 0 every pod kept and every prediction held, 1 a pod changed,
a prediction failed or a request failed, 2 the rehearsal could not run.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			uo, to, v, err := up(cmd, true)
			if err != nil {
				return err
			}
			faults, _ := rehearsal.ParseFaults(f.faults) // checked by up
			o := rehearsal.Options{UpOptions: uo, To: to, Variant: v, Manifests: f.manifests, Images: strings.Fields(f.images), Settle: f.settle, Faults: faults}
			if o.Manifests != "" {
				if o.Manifests, err = filepath.Abs(o.Manifests); err != nil {
					return &ExitError{Code: 2, Err: err}
				}
			}
			rep, err := rehearsal.Run(cmd.Context(), o)
			if err != nil {
				if cmd.Context().Err() != nil {
					leftRunning(s, uo)
				}
				return &ExitError{Code: 2, Err: err}
			}
			l := rehearsal.NewLayoutFor(uo.Matrix.Root, uo.Instance)
			if err := rep.Write(l.Report()); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if err := rep.WriteJUnit(l.JUnit()); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			rep.WriteTable(s.Out)
			fmt.Fprintf(s.Err, "report: %s\n", l.Report())
			if !rep.Passed() {
				return &ExitError{Code: 1, Err: fmt.Errorf("the rehearsal failed: %s (see the report)", strings.Join(rep.Failures(), "; "))}
			}
			return nil
		},
	}
	run.Flags().StringVar(&f.to, "to", "", "the kubelet release to switch to (TO)")
	run.Flags().StringVar(&f.variant, "variant", string(matrix.Patched), "TO's variant: patched or vanilla (the negative control)")
	run.Flags().StringVar(&f.manifests, "manifests", "", "a directory of your own workloads (default: the built-in ones)")
	run.Flags().StringVar(&f.images, "images", "", "images to load into every node: names on the rehearsal's or the machine's engine, or docker save tarballs (space separated)")
	run.Flags().DurationVar(&f.settle, "settle", 25*time.Second, "how long each node is watched after a switch, once Ready")
	run.Flags().StringVar(&f.faults, "faults", "", "faults to inject on the first node, comma-separated: hang (one pod container's inspect never answers, from before its first switch to TO until that phase is watched), orphan (a container whose pod, sandbox and checkpoint are gone, made with the kubelet stopped for that switch)")

	upCmd := &cobra.Command{
		Use:   "up",
		Short: "Bring a cluster up with FROM's kubelets and leave it running",
		RunE: func(cmd *cobra.Command, _ []string) error {
			uo, _, _, err := up(cmd, false)
			if err != nil {
				return err
			}
			c, err := rehearsal.Up(cmd.Context(), uo)
			if err != nil {
				if cmd.Context().Err() != nil {
					leftRunning(s, uo)
				}
				return &ExitError{Code: 2, Err: err}
			}
			fmt.Fprintf(s.Out, "export KUBECONFIG=%s\n", c.Layout.ControlPlane().Kubeconfig())
			fmt.Fprintf(s.Err, "kubectl: %s\n", c.Kubectl.Bin)
			return nil
		},
	}
	downCmd := &cobra.Command{
		Use:   "down",
		Short: "Remove everything the rehearsal created (nodes, volumes, control plane, its engine and bridge)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := filepath.Abs(g.root)
			if err != nil {
				return err
			}
			l, err := f.layout(root)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			unlock, err := rehearsal.LockMachine(l, cmd.CommandPath())
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			defer unlock()
			if err := rehearsal.Down(cmd.Context(), l, f.network(l), true, s.Err); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			return nil
		},
	}
	var stride int
	freeCmd := &cobra.Command{
		Use:   "free-instance",
		Short: "Print the first instance of --instance, --instance+--stride, ... this checkout may take now (the e2e's: another checkout's cluster left up is passed over, not taken down)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := filepath.Abs(g.root)
			if err != nil {
				return err
			}
			n, skipped, err := rehearsal.FreeInstance(root, f.instance, stride)
			for _, why := range skipped {
				fmt.Fprintf(s.Err, "passed over %s\n", why)
			}
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			fmt.Fprintln(s.Out, n)
			return nil
		},
	}
	freeCmd.Flags().IntVar(&stride, "stride", 1, "the step between candidates (the e2e: its number of processes)")
	for _, c := range []*cobra.Command{run, upCmd} {
		c.Flags().StringVar(&f.from, "from", "", "the kubelet release the nodes run first (FROM), vanilla")
		c.Flags().IntVar(&f.nodes, "nodes", 2, "number of nodes")
	}
	cmd.AddCommand(run, upCmd, downCmd, freeCmd)
	return cmd
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// controlPlaneBin builds (or reuses) the rehearsal's control plane r and
// returns the directory of its binaries.
func controlPlaneBin(ctx context.Context, s Streams, m *matrix.Matrix, r *matrix.Release) (string, error) {
	res, err := build.ControlPlane(ctx, build.Options{Matrix: m, Release: r, Log: s.Err})
	if err != nil {
		return "", fmt.Errorf("control plane %s: %w", r.Release, err)
	}
	return res.Target.Paths.Bin, nil
}

// leftRunning says, after an interrupt, what of the rehearsal may still
// run and how to remove it (it is kept so that a next run can reuse it).
func leftRunning(s Streams, o rehearsal.UpOptions) {
	down := "`make rehearsal-down`"
	if o.Instance > 0 {
		down = fmt.Sprintf("`toolchain rehearsal down --instance %d`", o.Instance)
	}
	fmt.Fprintf(s.Err, "interrupted: the rehearsal's engine (bridge %s), its node containers and the control plane may still run; %s removes all of them (a next run reuses or replaces them)\n", o.Network.Bridge, down)
}
