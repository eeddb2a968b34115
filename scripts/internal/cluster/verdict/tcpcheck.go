package verdict

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// tcpCheckScript reads "host port" lines and answers each with "ok" or
// "fail": whether a TCP connection opens within 2 s (bash's /dev/tcp,
// which every node image has).
const tcpCheckScript = `while read -r host port; do if timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" 2>/dev/null; then echo ok; else echo fail; fi; done`

// tcpChecker keeps one tcpCheckScript process inside a node for the whole
// rehearsal (one docker exec, not one per probe every few hundred
// milliseconds) and asks it for each probe, one at a time. A process that
// died or stopped answering is replaced at the next probe.
type tcpChecker struct {
	start func() *exec.Cmd

	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out chan string
}

func newTCPChecker(start func() *exec.Cmd) *tcpChecker { return &tcpChecker{start: start} }

// answerTimeout bounds one answer: the script's own 2 s, and the slack of
// a busy node.
const answerTimeout = 5 * time.Second

func (c *tcpChecker) check(ctx context.Context, host, port string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		if err := c.launch(); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(c.in, "%s %s\n", host, port); err != nil {
		c.stop()
		return fmt.Errorf("tcp check process: %w", err)
	}
	t := time.NewTimer(answerTimeout)
	defer t.Stop()
	select {
	case line, ok := <-c.out:
		switch {
		case !ok:
			c.stop()
			return fmt.Errorf("tcp check process ended")
		case line == "ok":
			return nil
		default:
			return fmt.Errorf("no TCP connection to %s:%s within 2 s", host, port)
		}
	case <-t.C:
		c.stop()
		return fmt.Errorf("tcp check process did not answer within %v", answerTimeout)
	case <-ctx.Done():
		c.stop() // its answer would be read by the next probe otherwise
		return ctx.Err()
	}
}

func (c *tcpChecker) launch() error {
	cmd := c.start()
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("tcp check process: %w", err)
	}
	out := make(chan string)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out <- strings.TrimSpace(sc.Text())
		}
	}()
	c.cmd, c.in, c.out = cmd, in, out
	return nil
}

// stop ends the process; the next check starts another.
func (c *tcpChecker) stop() {
	if c.cmd == nil {
		return
	}
	c.in.Close()
	c.cmd.Process.Kill()
	go func(out chan string) {
		for range out {
		}
	}(c.out)
	c.cmd.Wait()
	c.cmd, c.in, c.out = nil, nil, nil
}

// Close ends the process.
func (c *tcpChecker) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
}
