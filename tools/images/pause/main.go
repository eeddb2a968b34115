// Command pause is the sandbox process of the e2e pause image: it holds the
// pod's namespaces, reaps zombies (it is PID 1 of the sandbox) and exits 0 on
// SIGTERM or SIGINT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	// A handler must be installed: PID 1 ignores signals that have none.
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		// SIGCHLDs coalesce: reap every child that has exited.
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
