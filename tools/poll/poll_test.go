package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	ctx := context.Background()
	n := 0
	if err := Until(ctx, time.Second, time.Millisecond, func(context.Context) (bool, error) { n++; return n == 3, nil }); err != nil || n != 3 {
		t.Errorf("held on the third check: err %v after %d checks", err, n)
	}
	err := Until(ctx, 20*time.Millisecond, time.Millisecond, func(context.Context) (bool, error) { return false, errors.New("still 503") })
	if err == nil || !strings.Contains(err.Error(), "not after 20ms: still 503") {
		t.Errorf("timeout error %v does not carry the last reason", err)
	}
	gone := errors.New("exited")
	checks := 0
	err = Until(ctx, time.Minute, time.Millisecond, func(context.Context) (bool, error) { checks++; return false, Stop(gone) })
	if !errors.Is(err, gone) || checks != 1 {
		t.Errorf("Stop did not end the wait: %v after %d checks", err, checks)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Until(cctx, time.Minute, time.Hour, func(context.Context) (bool, error) { return false, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}
