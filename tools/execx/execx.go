// Package execx runs external commands the one way this toolchain does:
// with a context and a timeout, a clear environment, captured output, and
// an error that carries a pasteable command line and what the command
// printed. Nothing else in the toolchain starts a process.
//
// It is also the one place that logs through the logger the command line
// puts in the context (logr.FromContext). The toolchain's -v levels:
//
//	0  progress only (each step writes its own lines to stderr)
//	2  every command run, as a pasteable command line
//	4  also each command's exit, duration and output
package execx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// DefaultTimeout bounds a command whose Cmd sets none: generous enough
// for a cold kubelet compile or a full module download on a small
// machine, short enough that a hung proxy or compiler fails the run
// instead of blocking it forever.
const DefaultTimeout = time.Hour

// WaitDelay is how long a cancelled or timed-out command gets between
// SIGTERM and SIGKILL, and how long its output pipes may stay open after
// it exited (a grandchild holding them must not hang the toolchain).
const WaitDelay = 10 * time.Second

// waitDelay is WaitDelay; tests shorten it.
var waitDelay = WaitDelay

// ErrTimeout marks a command stopped because its timeout passed.
var ErrTimeout = errors.New("timed out")

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
	// Stdin, if set, is the command's standard input.
	Stdin io.Reader
	// Timeout bounds the command (DefaultTimeout when zero).
	Timeout time.Duration
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
	line := e.Command
	if e.Dir != "" {
		line = fmt.Sprintf("(cd %s && %s)", Quote(e.Dir), e.Command)
	}
	return fmt.Sprintf("command failed: %s: %v\n%s", line, e.Err, out)
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode is the exit status of the failed command in err's chain, or -1
// when err is not a command's non-zero exit.
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// Run runs c and returns its combined output (or only stderr when c.Stdout is set).
func Run(ctx context.Context, c Cmd) ([]byte, error) {
	p, err := Start(ctx, c)
	if err != nil {
		return nil, err
	}
	err = p.Wait()
	return p.out.bytes(), err
}

// Process is a started command; Start is for the long-running ones the
// caller watches and stops itself.
type Process struct {
	c      Cmd
	cmd    *exec.Cmd
	out    *buffer
	log    logr.Logger
	start  time.Time
	ctx    context.Context // the caller's
	runCtx context.Context // the caller's with the timeout
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Start starts c. Its timeout runs from now; cancelling ctx or the timeout
// passing sends SIGTERM, then SIGKILL after WaitDelay. The caller must
// call Wait (or Stop).
func Start(ctx context.Context, c Cmd) (*Process, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	p := &Process{c: c, out: &buffer{}, log: logr.FromContextOrDiscard(ctx), ctx: ctx, runCtx: runCtx, cancel: cancel, done: make(chan struct{})}
	cmd := exec.CommandContext(runCtx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	// A command must not outlive a toolchain that was killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = append(cmd.Environ(), c.Env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = waitDelay
	cmd.Stdin = c.Stdin
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	} else {
		cmd.Stdout = p.out
	}
	cmd.Stderr = p.out
	p.cmd = cmd
	p.log.V(2).Info("run", "command", p.line(), "dir", c.Dir)
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, &Error{Command: CommandLine(c), Dir: c.Dir, Err: err}
	}
	go func() {
		p.err = p.finish(cmd.Wait(), timeout)
		close(p.done)
	}()
	return p, nil
}

func (p *Process) finish(err error, timeout time.Duration) error {
	defer p.cancel()
	p.log.V(4).Info("exited", "command", p.line(), "took", time.Since(p.start).Round(time.Millisecond), "err", err, "output", p.out.String())
	if err == nil {
		return nil
	}
	// Stopped by the context: say why, the signal alone explains nothing.
	switch {
	case p.ctx.Err() != nil:
		err = fmt.Errorf("%w (%v)", p.ctx.Err(), err)
	case p.runCtx.Err() != nil:
		err = fmt.Errorf("%w after %s (%v)", ErrTimeout, timeout, err)
	}
	return &Error{Command: CommandLine(p.c), Dir: p.c.Dir, Output: p.out.String(), Err: err}
}

// Done is closed when the process has exited and its output is complete.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit; a non-zero exit is an *Error.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Stop sends SIGTERM, waits up to WaitDelay, then sends SIGKILL; it
// returns what Wait returns.
func (p *Process) Stop() error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(waitDelay):
		p.cmd.Process.Kill()
	}
	return p.Wait()
}

// Output is what the process printed so far (stderr only when c.Stdout is set).
func (p *Process) Output() string { return p.out.String() }

func (p *Process) line() string { return CommandLine(p.c) }

// buffer collects output written by the command while others read it.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string { return string(b.bytes()) }

func (b *buffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
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

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// Quote quotes s as one word for a POSIX shell, in the most readable form
// that round-trips: as is when nothing in it is special, in double quotes
// when nothing in it is special there, else in single quotes. The empty
// string becomes a pair of single quotes: an empty argument, not none.
func Quote(s string) string {
	switch {
	case s == "":
		return "''"
	case shellSafe.MatchString(s):
		return s
	case !strings.ContainsAny(s, `"$`+"`"+`\!`):
		return `"` + s + `"`
	default:
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
}
