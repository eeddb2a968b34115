package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/fsutil"
	"kubelet-toolchain/scripts/internal/godeps"
	"kubelet-toolchain/scripts/internal/gomod"
	"kubelet-toolchain/scripts/internal/lock"
	"kubelet-toolchain/scripts/internal/matrix"
	"kubelet-toolchain/scripts/internal/restore"
	"kubelet-toolchain/scripts/internal/source"
)

type lockFlags struct {
	release   string
	seed      string
	check     bool
	sourceZip string
}

func newLockCmd(s Streams, g *globals) *cobra.Command {
	f := &lockFlags{}
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Regenerate a release's dependency lock from its tree, or --check the committed one",
		Long: `Resolves every dependency of the release's tree to a module version the
module proxy serves, verified by the checksum database, and writes the lock.
Candidates come from the committed lock, an optional --seed file of pins
found by hand, and Godeps tag comments. With --check nothing is written:
the command fails if the regenerated lock differs from the committed one.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLock(cmd.Context(), s, g, f)
		},
	}
	cmd.Flags().StringVar(&f.release, "release", "", "release, e.g. 1.9.11")
	cmd.Flags().StringVar(&f.seed, "seed", "", "JSON list of candidate pins {root, rev, module, version, how, recursive}")
	cmd.Flags().BoolVar(&f.check, "check", false, "verify the committed lock instead of writing it")
	cmd.Flags().StringVar(&f.sourceZip, "source-zip", "", "use this module zip instead of downloading the release")
	return cmd
}

func runLock(ctx context.Context, s Streams, g *globals, f *lockFlags) error {
	m, r, err := g.release(f.release)
	if err != nil {
		return err
	}
	path := filepath.Join(m.Root, r.Lock)
	prev, err := lock.Load(path)
	if err != nil && !os.IsNotExist(err) && !f.check {
		fmt.Fprintf(s.Err, "note: ignoring unreadable %s: %v\n", r.Lock, err)
		prev = nil
	} else if err != nil && f.check {
		return err
	}
	zipPath, err := source.Zip(ctx, r, f.sourceZip)
	if err != nil {
		return err
	}
	var next *lock.Lock
	switch r.Era {
	case matrix.EraGodeps:
		next, err = godepsLock(ctx, s, r, zipPath, prev, f.seed)
	case matrix.EraModules:
		next, err = modulesLock(ctx, r, zipPath, prev)
	}
	if err != nil {
		return fmt.Errorf("release %s: lock: %w", r.Release, err)
	}
	out, err := next.Marshal()
	if err != nil {
		return err
	}
	if f.check {
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, out) {
			return fmt.Errorf("%s is out of date with what the proxy and the tree give now:\n%s\nrun `make lock VERSION=%s` and review the diff", r.Lock, lineDiff(string(old), string(out)), r.Release)
		}
		fmt.Fprintf(s.Out, "%s: ok (%d modules, %d missing, %d sums)\n", r.Lock, len(next.Modules), len(next.Missing), len(next.Sums))
		return nil
	}
	if err := fsutil.WriteFileAtomic(path, out, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "wrote %s (%d modules, %d missing, %d sums)\n", r.Lock, len(next.Modules), len(next.Missing), len(next.Sums))
	return nil
}

func godepsLock(ctx context.Context, s Streams, r *matrix.Release, zipPath string, prev *lock.Lock, seedPath string) (*lock.Lock, error) {
	data, err := readZipFile(zipPath, source.ModulePath+"@"+r.ModuleVersion+"/Godeps/Godeps.json")
	if err != nil {
		return nil, err
	}
	var gf godeps.File
	if err := json.Unmarshal(data, &gf); err != nil {
		return nil, fmt.Errorf("Godeps.json: %w", err)
	}
	repos, err := gf.Repos()
	if err != nil {
		return nil, err
	}
	var own []godeps.Repo
	for _, rp := range repos {
		if rp.Root != gf.ImportPath {
			own = append(own, rp)
		}
	}
	var seed []lock.Candidate
	if seedPath != "" {
		if seed, err = lock.LoadSeed(seedPath); err != nil {
			return nil, err
		}
	}
	dl := func(ctx context.Context, ids ...string) ([]gomod.Module, error) {
		return gomod.Download(ctx, r.Go, ids...)
	}
	return lock.Resolve(ctx, r.Release, own, prev, seed, dl)
}

// modulesLock applies the committed go.mod edits to a scratch tree, lets
// `go mod vendor` fetch what they need (checked by the checksum database)
// and records the go.sum lines that were added.
func modulesLock(ctx context.Context, r *matrix.Release, zipPath string, prev *lock.Lock) (*lock.Lock, error) {
	if prev == nil || prev.GoMod == nil {
		return nil, fmt.Errorf("a modules-era lock starts from its hand-written goMod edits; none found")
	}
	tmp, err := os.MkdirTemp("", "lock-"+r.Release+"-")
	if err != nil {
		return nil, err
	}
	defer fsutil.RemoveAll(tmp)
	tree := filepath.Join(tmp, "kubernetes")
	if err := source.Extract(zipPath, tree, r); err != nil {
		return nil, err
	}
	next := &lock.Lock{Release: r.Release, Era: r.Era, GoMod: prev.GoMod}
	sums, err := restore.NewSums(ctx, tree, r.Go, next)
	if err != nil {
		return nil, err
	}
	next.Sums = sums
	return next, next.Validate()
}

func readZipFile(zipPath, name string) ([]byte, error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	f, err := z.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zipPath, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// lineDiff lists lines only in a (-) or only in b (+).
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !inb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ina[l] {
			out = append(out, "+ "+l)
		}
	}
	if len(out) > 40 {
		out = append(out[:40], fmt.Sprintf("... and %d more lines", len(out)-40))
	}
	return strings.Join(out, "\n")
}
