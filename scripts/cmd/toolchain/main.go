// Command toolchain builds patched kubelets from pinned upstream releases.
// The Makefile is its front; see `toolchain --help`.
package main

import (
	"fmt"
	"os"

	"kubelet-toolchain/scripts/internal/cli"
)

func main() {
	if err := cli.Run(cli.Streams{Out: os.Stdout, Err: os.Stderr}, os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "ERROR: %v\n", err)
		os.Exit(cli.ExitCode(err))
	}
}
