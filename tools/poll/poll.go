// Package poll is the one way the toolchain waits for something: check a
// condition every interval until it holds, the timeout passes, the
// condition gives up, or the context ends. The error names the last reason
// the condition gave, so a timeout says what was still wrong.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Condition reports whether what is awaited holds. While it does not, a
// non-nil error is the reason (reported if time runs out); an error made
// by Stop ends the wait at once.
type Condition func(ctx context.Context) (bool, error)

// Until checks cond at once and then every interval.
func Until(ctx context.Context, timeout, interval time.Duration, cond Condition) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		done, err := cond(ctx)
		if done {
			return nil
		}
		var stop stopError
		if errors.As(err, &stop) {
			return stop.err
		}
		if err != nil {
			last = err
		}
		if !time.Now().Before(deadline) {
			if last == nil {
				return fmt.Errorf("not after %s", timeout)
			}
			return fmt.Errorf("not after %s: %w", timeout, last)
		}
		t := time.NewTimer(min(interval, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			if last != nil {
				return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Stop makes a Condition's error end the wait instead of being retried
// (the process being waited for has exited).
func Stop(err error) error { return stopError{err} }

type stopError struct{ err error }

func (s stopError) Error() string { return s.err.Error() }
func (s stopError) Unwrap() error { return s.err }
