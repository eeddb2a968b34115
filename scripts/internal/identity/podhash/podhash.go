// Package podhash answers "which containers would a kubelet switch
// recreate?" with each release's own code: a helper (cmd/podhash, laid
// into every prepared tree by the build series' overlay, built with the
// kubelet's own flags) decodes pods the way that kubelet has them (from the
// API server, or as static pod manifests) and hashes them with that
// build's HashContainer.
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
	"path/filepath"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/tools/execx"
)

// Result is one container as a kubelet build sees it.
type Result struct {
	Pod        string `json:"pod"` // namespace/name
	Container  string `json:"container"`
	Init       bool   `json:"init"`
	Hash       uint64 `json:"hash"`
	UID        string `json:"uid"`
	UIDDerived bool   `json:"uidDerived"`
	// UIDNewerGo is the UID this release built by Go >= 1.9 without the
	// build series' restoring patch derives, where it differs from UID.
	UIDNewerGo string `json:"uidNewerGo,omitempty"`
	// UIDsKept are the UIDs a patched build keeps a running pod under
	// (UID, which a pod that runs nowhere yet gets, first).
	UIDsKept []string `json:"uidsKept,omitempty"`
	// UIDCaveat says why the official binary's UID of this pod cannot be
	// reproduced here (it depends on the node or on when it started).
	UIDCaveat string `json:"uidCaveat,omitempty"`
	Accepted  *bool  `json:"accepted,omitempty"`
	// Source is how the pod was decoded: api or static.
	Source string `json:"source"`
	// Rejected is why this release's kubelet would refuse the pod.
	Rejected string `json:"rejected,omitempty"`
	// Dropped are fields of the container this release's types lack.
	Dropped []string `json:"dropped,omitempty"`
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
	Options
}

// Source says how pods reach the kubelet.
const (
	// SourceAPI: pods as the API server sends them (the default).
	SourceAPI = "api"
	// SourceStatic: manifests as the kubelet's --pod-manifest-path reads them.
	SourceStatic = "static"
)

// Options are the kubelet flags that change how a release decodes pods.
type Options struct {
	// Source is SourceAPI or SourceStatic ("" = SourceAPI).
	Source string
	// Gates are feature gates (--feature-gates).
	Gates string
	// Static pods only: the node name, the manifests' path on the node, and
	// --allow-privileged (nil = the release's default).
	NodeName, ManifestPath string
	AllowPrivileged        *bool
}

func (o Options) args() []string {
	var args []string
	if o.Source != "" {
		args = append(args, "--source="+o.Source)
	}
	if o.Gates != "" {
		args = append(args, "--feature-gates="+o.Gates)
	}
	if o.NodeName != "" {
		args = append(args, "--node="+o.NodeName)
	}
	if o.ManifestPath != "" {
		args = append(args, "--pod-manifest-path="+o.ManifestPath)
	}
	if o.AllowPrivileged != nil {
		args = append(args, fmt.Sprintf("--allow-privileged=%v", *o.AllowPrivileged))
	}
	return args
}

// Build prepares the release's tree (build.Kubelet: a no-op when up to date)
// and compiles the helper in it with the kubelet's own go build flags, so
// it links what the kubelet links (the stamped hash baseline among them).
func Build(ctx context.Context, o build.Options) (*Helper, error) {
	if _, err := build.Kubelet(ctx, o); err != nil {
		return nil, err
	}
	p := build.PathsFor(o.OutputDir, o.Release.Release, o.Variant)
	out := filepath.Join(p.Dir, "bin", "podhash")
	args, env := build.CompileCommand(o.Release, o.Variant, p)
	if err := build.EnsureCToolchain(ctx, o.Release, p, env, o.Log); err != nil {
		return nil, err
	}
	pkg := "k8s.io/kubernetes/cmd/podhash"
	if o.Release.Era == matrix.EraModules {
		pkg = "./cmd/podhash"
	}
	// Rehearsals side by side build the same helper: one at a time.
	unlock, err := fsutil.Lock(filepath.Join(p.Dir, ".podhash.lock"), nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: append(args, "-o", out, pkg), Dir: build.BuildDir(o.Release, p), Env: env}); err != nil {
		return nil, fmt.Errorf("release %s %s: building cmd/podhash: %w", o.Release.Release, o.Variant, err)
	}
	return &Helper{Release: o.Release, Variant: o.Variant, Path: out}, nil
}

// Hash runs the helper on a pods file. stored, when not nil, are hashes
// (by Key) whose acceptance this build reports.
func (h *Helper) Hash(ctx context.Context, pods string, stored map[string]uint64) ([]Result, error) {
	args := h.Options.args()
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
	var stdout bytes.Buffer
	stderr, err := execx.Run(ctx, execx.Cmd{Name: h.Path, Args: append(args, pods), Stdout: &stdout})
	if err != nil {
		if execx.ExitCode(err) == 2 {
			msg := strings.TrimSpace(strings.TrimPrefix(string(stderr), "podhash: "))
			return nil, fmt.Errorf("%w: %s", ErrBadInput, msg)
		}
		return nil, fmt.Errorf("release %s %s podhash: %w", h.Release.Release, h.Variant, err)
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
