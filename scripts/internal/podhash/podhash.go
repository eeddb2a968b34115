// Package podhash answers "which containers would a kubelet switch
// recreate?" with each release's own code: a helper (cmd/podhash, laid
// into every prepared tree by the build series' overlay) decodes pods the
// way that kubelet decodes static pods and hashes them with that build's
// HashContainer.
package podhash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"kubelet-toolchain/scripts/internal/build"
	"kubelet-toolchain/scripts/internal/execx"
	"kubelet-toolchain/scripts/internal/matrix"
)

// Result is one container as a kubelet build sees it.
type Result struct {
	Pod        string `json:"pod"` // namespace/name
	Container  string `json:"container"`
	Init       bool   `json:"init"`
	Hash       uint64 `json:"hash"`
	UID        string `json:"uid"`
	UIDDerived bool   `json:"uidDerived"`
	Accepted   *bool  `json:"accepted,omitempty"`
}

// Key is namespace/pod/container.
func (r Result) Key() string { return r.Pod + "/" + r.Container }

// ErrBadInput marks pods the helper refused (exit status 2).
var ErrBadInput = errors.New("bad pods file")

// Helper is a built cmd/podhash of one release+variant.
type Helper struct {
	Release *matrix.Release
	Variant matrix.Variant
	Path    string
	// Gates are feature gates passed to the helper (--feature-gates).
	Gates string
}

// Build prepares the release's tree (build.Run: a no-op when up to date)
// and compiles the helper in it.
func Build(ctx context.Context, o build.Options) (*Helper, error) {
	if _, err := build.Run(ctx, o); err != nil {
		return nil, err
	}
	p := build.PathsFor(o.OutputDir, o.Release.Release, o.Variant)
	out := filepath.Join(p.Dir, "bin", "podhash")
	_, env := build.CompileCommand(o.Release, o.Variant, p)
	pkg := "k8s.io/kubernetes/cmd/podhash"
	if o.Release.Era == matrix.EraModules {
		pkg = "./cmd/podhash"
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: []string{"build", "-trimpath", "-o", out, pkg}, Dir: build.BuildDir(o.Release, p), Env: env}); err != nil {
		return nil, fmt.Errorf("release %s %s: building cmd/podhash: %w", o.Release.Release, o.Variant, err)
	}
	return &Helper{Release: o.Release, Variant: o.Variant, Path: out}, nil
}

// Hash runs the helper on a pods file. stored, when not nil, are hashes
// (by Key) whose acceptance this build reports.
func (h *Helper) Hash(ctx context.Context, pods string, stored map[string]uint64) ([]Result, error) {
	args := []string{}
	if h.Gates != "" {
		args = append(args, "--feature-gates="+h.Gates)
	}
	if stored != nil {
		f, err := os.CreateTemp("", "stored-hashes-")
		if err != nil {
			return nil, err
		}
		defer os.Remove(f.Name())
		for k, v := range stored {
			fmt.Fprintf(f, "%s %d\n", k, v)
		}
		f.Close()
		args = append(args, "--stored="+f.Name())
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, h.Path, append(args, pods)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(strings.TrimPrefix(stderr.String(), "podhash: "))
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 2 {
			return nil, fmt.Errorf("%w: %s", ErrBadInput, msg)
		}
		return nil, fmt.Errorf("release %s %s podhash: %v: %s", h.Release.Release, h.Variant, err, msg)
	}
	return decode(&stdout)
}

func decode(r io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var res Result
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, sc.Err()
}
