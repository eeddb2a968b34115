package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/machine"
)

// newMachineCmd records the machine's kernel settings before a suite and
// fails after it if any changed: the suites must leave the machine as they
// found it.
func newMachineCmd(s Streams, _ *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "machine",
		Short: "Record the machine's kernel settings (/proc/sys, modules) and check a suite left them unchanged",
	}
	save := &cobra.Command{
		Use:   "save FILE",
		Short: "Record every readable /proc/sys entry and the loaded modules in FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			st, err := machine.Read("/proc")
			if err != nil {
				return err
			}
			return st.Save(args[0])
		},
	}
	var allowed []string
	check := &cobra.Command{
		Use:   "check FILE",
		Short: "Fail, listing each one, when a kernel setting differs from what FILE recorded",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			before, err := machine.Load(args[0])
			if err != nil {
				return fmt.Errorf("no record of the machine before the suite: %w", err)
			}
			after, err := machine.Read("/proc")
			if err != nil {
				return err
			}
			changes := machine.Compare(before, after, allowed)
			if len(changes) == 0 {
				fmt.Fprintf(s.Out, "machine: %d kernel settings as recorded in %s\n", len(after.Sysctls), args[0])
				return nil
			}
			lines := make([]string, len(changes))
			for i, c := range changes {
				lines[i] = "  " + c.String()
			}
			return fmt.Errorf("the machine's kernel settings changed since %s (a test or rehearsal wrote them; see docs on the shadowed sysctls):\n%s",
				args[0], strings.Join(lines, "\n"))
		},
	}
	check.Flags().StringSliceVar(&allowed, "allow", nil, "changes stated as requirements: a /proc/sys path (net/ipv4/ip_forward) or \"module NAME\"")
	cmd.AddCommand(save, check)
	return cmd
}
