// Package execx runs external commands the one way this toolchain does:
// with a context, a clear environment, captured output, and an error that
// carries a pasteable command line and what the command printed.
package execx

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
)

// Cmd describes one external command.
type Cmd struct {
	Name string
	Args []string
	Dir  string
	// Env is appended to the current environment (later entries win).
	Env []string
	// Stdout, if set, receives the command's standard output as it runs
	// instead of it being captured.
	Stdout io.Writer
}

// Error is returned when a command fails; it keeps the command line and
// the tail of its output so the failure can be reproduced by hand.
type Error struct {
	Command string
	Dir     string
	Output  string
	Err     error
}

func (e *Error) Error() string {
	out := strings.TrimSpace(e.Output)
	if n := len(out); n > 4000 {
		out = "..." + out[n-4000:]
	}
	return fmt.Sprintf("command failed: (cd %s && %s): %v\n%s", Quote(e.Dir), e.Command, e.Err, out)
}

func (e *Error) Unwrap() error { return e.Err }

// Run runs c and returns its combined output (or only stderr when c.Stdout is set).
func Run(ctx context.Context, c Cmd) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	// A command must not outlive a toolchain that was killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = append(cmd.Environ(), c.Env...)
	var buf bytes.Buffer
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	} else {
		cmd.Stdout = &buf
	}
	cmd.Stderr = &buf
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return buf.Bytes(), &Error{Command: CommandLine(c), Dir: c.Dir, Output: buf.String(), Err: err}
	}
	return buf.Bytes(), nil
}

// CommandLine renders c as a shell command line, environment included.
func CommandLine(c Cmd) string {
	var parts []string
	for _, e := range c.Env {
		parts = append(parts, Quote(e))
	}
	parts = append(parts, Quote(c.Name))
	for _, a := range c.Args {
		parts = append(parts, Quote(a))
	}
	return strings.Join(parts, " ")
}

// Quote quotes s for a POSIX shell when it needs quoting.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
