package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/dockershim"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/migrate"
)

func newSwitchNodeCmd(s Streams) *cobra.Command {
	var to, nodeRoot string
	var apply, back bool
	cmd := &cobra.Command{
		Use:   "switch-node",
		Short: "Move a kubeadm node's kubelet 1.23 off its dockershim onto 1.23.17's served on its own, for a kubelet of 1.24 or 1.25: plan and dry run (default), --apply, --back",
		Long: `Reads the node's kubelet flags (kubeadm-flags.env, the distribution's
/etc/default/kubelet or /etc/sysconfig/kubelet) and config file, and writes
the new kubelet's flags, the shim's (dockershim's own settings: network
plugin, CNI dirs, pod infra image, cgroup driver...), the shim's systemd
unit and a kubelet drop-in that starts it first. Without --apply it prints
the plan and every file. The first --apply keeps what it replaces under
` + migrate.BackupDir + `; running it again plans from those and
writes the same; --back puts every file back. Binaries and systemctl are
the operator's: the steps are printed.

Before anything is written, the pod sandboxes running on the engine the
shim will use (its --docker-endpoint) are read: a shim on another network
plugin than made them would report no IP for them, and the new kubelet
would replace every such pod. A mismatch is refused, naming the pods;
--apply also refuses when the engine cannot be read.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n := migrate.Node{Root: nodeRoot}
			if back {
				done, err := n.Back()
				for _, d := range done {
					fmt.Fprintln(s.Out, d)
				}
				if err != nil {
					return err
				}
				fmt.Fprint(s.Out, "\nThen: systemctl stop kubelet; systemctl disable --now dockershim;\n"+
					"install kubelet 1.23.17 (its own dockershim again; the dockershim package may stay: nothing starts it);\n"+
					"systemctl daemon-reload; systemctl start kubelet\n")
				return nil
			}
			v, err := matrix.ParseVersion(to)
			if err != nil || v.Major != 1 {
				return fmt.Errorf("--to=%q: want the release to switch to, 1.24.x or 1.25.x", to)
			}
			p, err := n.PlanSwitch(to, v.Minor)
			if err != nil {
				return err
			}
			network, err := checkNetworkPlugin(cmd.Context(), p, apply)
			if err != nil {
				return fmt.Errorf("cannot switch to %s, nothing written: %w", to, err)
			}
			fmt.Fprintf(s.Out, "Switching this node's kubelet 1.23 to %s on 1.23.17's dockershim served on its own", to)
			if p.Replanned {
				fmt.Fprintf(s.Out, " (applied before: planned from the files kept under %s)", migrate.BackupDir)
			}
			fmt.Fprintln(s.Out)
			w := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "FLAG\tFROM\tGOES TO\tWHY")
			for _, r := range p.Rows {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Flag, r.From, r.Where, r.Reason)
			}
			w.Flush()
			fmt.Fprintln(s.Out, network)
			if !apply {
				fmt.Fprintln(s.Out, "\nDry run: the files --apply writes, whole:")
				for _, f := range p.Files {
					fmt.Fprintf(s.Out, "\n--- %s\n%s", f.Path, f.Data)
				}
				return nil
			}
			if err := n.Apply(p); err != nil {
				return err
			}
			for _, f := range p.Files {
				fmt.Fprintf(s.Out, "wrote %s\n", f.Path)
			}
			install := fmt.Sprintf("the dockershim package (1.23.17's) whose unit %s this plan configures", p.PackagedUnit)
			if p.PackagedUnit == "" {
				install = fmt.Sprintf("dockershim (1.23.17's: the package, or the binary at %s for the unit written above)", dockershim.Binary)
			}
			fmt.Fprintf(s.Out, "\nThen: install %s, and kubelet %s;\n"+
				"systemctl daemon-reload; systemctl stop kubelet; systemctl start dockershim; systemctl start kubelet\n"+
				"(the kubelet's drop-in starts the shim with it from now on).\n"+
				"The way back: toolchain switch-node --back, then the steps it prints.\n", install, to)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the release to switch to: 1.24.x or 1.25.x")
	cmd.Flags().StringVar(&nodeRoot, "node-root", "/", "the node's root directory (a copy of it, to try)")
	cmd.Flags().BoolVar(&apply, "apply", false, "write the files (the first time, keeping what they replace)")
	cmd.Flags().BoolVar(&back, "back", false, "put every file the switch wrote back as it was")
	cmd.MarkFlagsMutuallyExclusive("apply", "back")
	return cmd
}

// checkNetworkPlugin reads the sandboxes on the engine the shim will use
// and refuses a network plugin that did not make them; it returns the
// plan's line saying what was checked. A dry run goes on, saying so, when
// the engine cannot be read (a copy of a node's files); --apply does not.
func checkNetworkPlugin(ctx context.Context, p *migrate.Plan, apply bool) (string, error) {
	endpoint, ok := p.ShimFlag("docker-endpoint")
	if !ok {
		endpoint = migrate.DockerEndpoint
	}
	plugin, _ := p.ShimFlag("network-plugin")
	sbs, err := migrate.ReadSandboxes(ctx, endpoint)
	if err != nil {
		if apply {
			return "", fmt.Errorf("the pod sandboxes at %s cannot be read, so the shim's network plugin (%q) cannot be checked against them: %w", endpoint, plugin, err)
		}
		return fmt.Sprintf("\nNetwork plugin %q NOT CHECKED: the sandboxes at %s cannot be read (%v); --apply refuses until they can.", plugin, endpoint, err), nil
	}
	if bad := migrate.NetworkMismatch(plugin, sbs); len(bad) > 0 {
		return "", fmt.Errorf("the shim would run with --network-plugin=%q, which reads no IP for these running pods (the kubelet would replace each):\n  %s\nfix the kubelet's flags to the plugin the node runs, then plan again", plugin, strings.Join(bad, "\n  "))
	}
	return fmt.Sprintf("\nNetwork plugin %q fits the %d pod sandboxes running at %s.", plugin, len(sbs), endpoint), nil
}
