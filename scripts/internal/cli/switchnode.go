package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
the operator's: the steps are printed.`,
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
					"install kubelet 1.23.17 (its own dockershim again); systemctl daemon-reload; systemctl start kubelet\n")
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
			fmt.Fprintf(s.Out, "\nThen: install kubelet %s and dockershim (1.23.17's) at %s; systemctl daemon-reload;\n"+
				"systemctl stop kubelet; systemctl enable --now dockershim; systemctl start kubelet.\n"+
				"The way back: toolchain switch-node --back, then the steps it prints.\n", to, migrate.ShimBinary)
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
