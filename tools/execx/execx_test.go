package execx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

func TestQuoteRoundTripsThroughSh(t *testing.T) {
	words := []string{"", "plain", "-s -w -buildid= -X 'a.b=c d'", `it's "x" $HOME`, "a\\b", "GOFLAGS=-mod=vendor",
		"v1.9.11+patched.k19-fixes", "tab\there", "new\nline", "!bang", "`tick`"}
	var line []string
	for _, w := range words {
		line = append(line, Quote(w))
	}
	// One printf per word, each ended by NUL, so an empty word shows.
	out, err := Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", `for w in ` + strings.Join(line, " ") + `; do printf '%s\0' "$w"; done`}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(words) {
		t.Fatalf("sh read %d words back from %s, want %d: %q", len(got), strings.Join(line, " "), len(words), got)
	}
	for i := range words {
		if got[i] != words[i] {
			t.Errorf("Quote(%q) = %s; sh reads it back as %q", words[i], Quote(words[i]), got[i])
		}
	}
}

func TestQuoteReadable(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "''",
		"GOFLAGS=":             "GOFLAGS=",
		"k8s.io/kubernetes":    "k8s.io/kubernetes",
		"-s -w -X 'a.b=c'":     `"-s -w -X 'a.b=c'"`,
		`$HOME`:                `'$HOME'`,
		"it's":                 `"it's"`,
		`say "hi" and 'bye' $`: `'say "hi" and '\''bye'\'' $'`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestErrorCarriesCommandLineAndOutput(t *testing.T) {
	dir := t.TempDir()
	_, err := Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "echo to-stdout; echo to-stderr >&2; exit 3"}, Dir: dir, Env: []string{"A=b c"}})
	var ee *Error
	if !errors.As(err, &ee) {
		t.Fatalf("error %T %v is not an *Error", err, err)
	}
	if want := `"A=b c" sh -c "echo to-stdout; echo to-stderr >&2; exit 3"`; ee.Command != want {
		t.Errorf("command line\n%s\nwant\n%s", ee.Command, want)
	}
	for _, want := range []string{"(cd " + dir + " && " + ee.Command + ")", "exit status 3", "to-stdout", "to-stderr"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if ExitCode(err) != 3 {
		t.Errorf("ExitCode = %d", ExitCode(err))
	}
	if ExitCode(errors.New("other")) != -1 {
		t.Error("ExitCode of a non-exit error")
	}
}

func TestStdoutStreamsAndOutputIsStderr(t *testing.T) {
	var stdout strings.Builder
	out, err := Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "echo out; echo err >&2"}, Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "out\n" || string(out) != "err\n" {
		t.Errorf("stdout %q, returned %q", stdout.String(), out)
	}
}

func TestTimeout(t *testing.T) {
	start := time.Now()
	_, err := Run(context.Background(), Cmd{Name: "sleep", Args: []string{"30"}, Timeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to stop", d)
	}
	if !strings.Contains(err.Error(), "sleep 30") {
		t.Errorf("error does not name the command: %v", err)
	}
}

func TestCancelIsNotATimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Run(ctx, Cmd{Name: "sleep", Args: []string{"30"}})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A command that ignores SIGTERM is killed WaitDelay later.
func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	defer func(d time.Duration) { waitDelay = d }(waitDelay)
	waitDelay = 500 * time.Millisecond
	p, err := Start(context.Background(), Cmd{Name: "sh", Args: []string{"-c", `trap "" TERM; echo ready; while :; do sleep 0.1; done`}})
	if err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(p.Output(), "ready") {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := p.Stop(); err == nil {
		t.Error("killed process reported success")
	}
	if d := time.Since(start); d < waitDelay || d > waitDelay+5*time.Second {
		t.Errorf("stopped after %s, want about %s", d, waitDelay)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Done not closed after Stop")
	}
}

func TestCommandLinesLoggedAtV2(t *testing.T) {
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 2})
	ctx := logr.NewContext(context.Background(), logger)
	if _, err := Run(ctx, Cmd{Name: "true", Args: []string{"a b"}}); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `true \"a b\"`) {
		t.Errorf("logged %q", lines)
	}
	lines = nil
	quiet := logr.NewContext(context.Background(), funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1}))
	Run(quiet, Cmd{Name: "true"})
	if len(lines) != 0 {
		t.Errorf("logged at -v=1: %q", lines)
	}
}
