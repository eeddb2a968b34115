package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/machine"
)

// newMachineCmd records the machine's kernel settings before a suite and
// fails after it if any changed, or if the suite left a process or mount
// under the directory given at save (--under): the suites must leave the
// machine as they found it.
func newMachineCmd(s Streams, _ *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "machine",
		Short: "Record the machine's kernel settings (/proc/sys, modules) and check a suite left them unchanged",
	}
	var under string
	save := &cobra.Command{
		Use:   "save FILE",
		Short: "Record every readable /proc/sys entry and the loaded modules in FILE (and with --under, the processes and mounts there)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			st, err := machine.Read("/proc")
			if err != nil {
				return err
			}
			if under != "" {
				if err := st.ReadHeld("/proc", under); err != nil {
					return err
				}
			}
			return st.Save(args[0])
		},
	}
	save.Flags().StringVar(&under, "under", "", "also record the processes and mounts under this absolute directory (a checkout's _output): check then fails on any the suite left")
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
			if before.Under != "" {
				if err := after.ReadHeld("/proc", before.Under); err != nil {
					return err
				}
			}
			changes := machine.Compare(before, after, allowed)
			if len(changes) == 0 {
				fmt.Fprintf(s.Out, "machine: %d kernel settings as recorded in %s", len(after.Sysctls), args[0])
				if after.Under != "" {
					fmt.Fprintf(s.Out, "; nothing left running or mounted under %s", after.Under)
				}
				fmt.Fprintln(s.Out)
				return nil
			}
			lines := make([]string, len(changes))
			for i, c := range changes {
				lines[i] = "  " + c.String()
			}
			return fmt.Errorf("the machine differs from %s: a test or rehearsal wrote a kernel setting (see docs on the shadowed sysctls), or left a process or mount of its own:\n%s",
				args[0], strings.Join(lines, "\n"))
		},
	}
	check.Flags().StringSliceVar(&allowed, "allow", nil, "changes stated as requirements: a /proc/sys path (net/ipv4/ip_forward) or \"module NAME\"")
	cmd.AddCommand(save, check)
	return cmd
}
