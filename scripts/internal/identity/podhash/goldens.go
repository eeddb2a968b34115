package podhash

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/identity/go18dump"
	"kubelet-toolchain/tools/execx"
)

const (
	// GoldensDir holds the test manifests, and per official release line
	// (<minor>/, e.g. 1.7/) their goldens (GoldensFile) and dumps,
	// relative to the repository.
	GoldensDir  = "overlay/legacy-types/pkg/kubelet/legacytypes/testdata/official"
	GoldensFile = "goldens.json"
)

// GoldensReleases are the releases whose official binaries were built by
// go1.8.3 (1.7 and 1.8): their vanilla helpers dump the manifests, one
// release per minor line.
var GoldensReleases = []string{"1.7.5", "1.8.15"}

// Golden is what an official go1.8.3-built kubelet derives for one static
// pod manifest: the UID and container hashes of the tree's own dumps (Go
// >= 1.9) rewritten into go1.8.3's layout (package go18dump). The in-tree
// tests check our builds against it. Both dumps are written beside the
// goldens (<minor>/<manifest>.dump, <minor>/<manifest>.go18.dump).
type Golden struct {
	File        string                     `json:"file"`
	Pod         string                     `json:"pod"`
	OfficialUID string                     `json:"officialUID"`
	NewerGoUID  string                     `json:"newerGoUID"`
	Containers  map[string]ContainerGolden `json:"containers"`
}

// ContainerGolden is a container's hash label value, official and as the
// release built by Go >= 1.9 writes it.
type ContainerGolden struct {
	OfficialHash uint64 `json:"officialHash"`
	NewerGoHash  uint64 `json:"newerGoHash"`
}

// GoldenEnv is the environment the dumps are made in: a Local without
// zone tables, which go1.8.3 printed the same whenever it started.
var GoldenEnv = []string{"TZ=UTC"}

// GoldenNode is the node name the dumps are made for (the UID's dump does
// not hold it: hashutil.DeepHashObject resets the hasher first).
const GoldenNode = "node"

// GenGoldens dumps every manifest (*.yaml, *.json) in dir with release r's
// vanilla helper and returns the files to write to GoldensOut(dir, r), by
// name: the goldens (GoldensFile) and each manifest's dumps. r must be a
// release whose official build was go1.8.3 (its helper prints the Go >=
// 1.9 dumps, which are rewritten).
func GenGoldens(ctx context.Context, m *matrix.Matrix, r *matrix.Release, dir string, log io.Writer) (map[string][]byte, error) {
	yamls, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	jsons, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var files []string
	for _, f := range append(yamls, jsons...) {
		if filepath.Base(f) != GoldensFile {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.yaml or *.json manifests", dir)
	}
	sort.Strings(files)
	h, err := BuildFor(ctx, m, r, matrix.Vanilla, log)
	if err != nil {
		return nil, err
	}
	var goldens []Golden
	out := map[string][]byte{}
	for _, f := range files {
		var newerGo, official bytes.Buffer
		var stdout bytes.Buffer
		args := []string{"--dump", "--allow-privileged", "--node=" + GoldenNode, "--pod-manifest-path=/etc/kubernetes/manifests/" + filepath.Base(f), f}
		if _, err := execx.Run(ctx, execx.Cmd{Name: h.Path, Args: args, Env: GoldenEnv, Stdout: &stdout}); err != nil {
			return nil, fmt.Errorf("release %s vanilla podhash --dump %s: %w", r.Release, f, err)
		}
		dec := json.NewDecoder(&stdout)
		for {
			var d struct {
				Pod, UID, Dump string
				Containers     map[string]string
			}
			if err := dec.Decode(&d); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: podhash --dump output: %w", f, err)
			}
			g, dumps, err := golden(filepath.Base(f), d.Pod, d.UID, d.Dump, d.Containers)
			if err != nil {
				return nil, fmt.Errorf("%s: pod %s: %w", f, d.Pod, err)
			}
			goldens = append(goldens, g)
			for _, dm := range dumps {
				fmt.Fprintf(&newerGo, "%s\n%s\n\n", dm.what, dm.newerGo)
				fmt.Fprintf(&official, "%s\n%s\n\n", dm.what, dm.official)
			}
		}
		out[filepath.Base(f)+".dump"] = newerGo.Bytes()
		out[filepath.Base(f)+".go18.dump"] = official.Bytes()
	}
	data, err := json.MarshalIndent(goldens, "", "  ")
	out[GoldensFile] = append(data, '\n')
	return out, err
}

// dump is one value's dump as Go >= 1.9 printed it and as go1.8.3 did.
type dump struct{ what, newerGo, official string }

func golden(file, pod, uid, podDump string, containers map[string]string) (Golden, []dump, error) {
	// The dump must be what the helper hashed, or the goldens prove nothing.
	if got := md5hex(podDump); got != uid {
		return Golden{}, nil, fmt.Errorf("the dump hashes to %s, the helper derived %s", got, uid)
	}
	official, err := go18dump.Rewrite(podDump)
	if err != nil {
		return Golden{}, nil, err
	}
	if official == podDump || !strings.Contains(official, "(time.Time){sec:") {
		return Golden{}, nil, fmt.Errorf("the rewrite changed no time.Time: not the pod dump of a release that go1.8.3 built")
	}
	g := Golden{File: file, Pod: pod, OfficialUID: md5hex(official), NewerGoUID: uid, Containers: map[string]ContainerGolden{}}
	dumps := []dump{{"pod " + pod + " (static pod UID: md5)", podDump, official}}
	names := make([]string, 0, len(containers))
	for name := range containers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cd := containers[name]
		oc, err := go18dump.Rewrite(cd)
		if err != nil {
			return Golden{}, nil, fmt.Errorf("container %s: %w", name, err)
		}
		g.Containers[name] = ContainerGolden{OfficialHash: fnv32a(oc), NewerGoHash: fnv32a(cd)}
		dumps = append(dumps, dump{"container " + name + " (hash: fnv32a)", cd, oc})
	}
	return g, dumps, nil
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func fnv32a(s string) uint64 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return uint64(h.Sum32())
}

// GoldensOut is where r's goldens are written: the minor line's
// directory under the manifests' dir.
func GoldensOut(dir string, r *matrix.Release) string { return filepath.Join(dir, r.Minor()) }

// WriteGoldens writes, or with check compares, the goldens and dumps in
// dir (made with GoldensOut).
func WriteGoldens(dir string, files map[string][]byte, check bool) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if check {
			old, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !bytes.Equal(old, files[name]) {
				return fmt.Errorf("%s is out of date: run make uid-goldens", path)
			}
			continue
		}
		if err := fsutil.WriteFileAtomic(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
