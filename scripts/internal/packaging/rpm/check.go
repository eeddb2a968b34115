package rpm

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
	"kubelet-toolchain/scripts/internal/packaging/scratchroot"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/glibc"
	"kubelet-toolchain/tools/execx"
)

// CheckInput names the released files and what they must hold.
type CheckInput struct {
	Release *matrix.Release
	Variant matrix.Variant
	Version string
	// Spec, SRPM and RPM are the released files.
	Spec, SRPM, RPM string
	// Patches are the series the build applied, in order.
	Patches []quilt.Patch
	// Source0 is the name Source0 must have; Orig a file it must equal
	// byte for byte (the Debian orig tarball).
	Source0, Orig string
	// CToolchain is the name Source3 must have and CToolchainPath the
	// tarball it must equal (a cgo release only).
	CToolchain, CToolchainPath string
	// SHA256 is the released kubelet's; Kubelet what its --version prints.
	SHA256, Kubelet string
	// ShimRPM and ShimSHA256 are the released dockershim subpackage and
	// binary, for a release that serves it on its own ("" otherwise);
	// Shim what its --version prints.
	ShimRPM, ShimSHA256, Shim string
	// SHA256Is says in the log where SHA256 comes from, e.g. "the released
	// binary's and CHECKSUMS'".
	SHA256Is string
	// ColdCache rebuilds with an empty GOCACHE, as a packager's first build.
	ColdCache bool
	TmpParent string
	Log       io.Writer
}

// CheckResult is what Check measured.
type CheckResult struct {
	// Rebuilt is the sha256 of the kubelet rpmbuild --rebuild made from
	// the SRPM; SameRPM says whether that RPM is byte-identical to the
	// released one.
	Rebuilt     string
	RebuildTook time.Duration
	SameRPM     bool
	NEVRA       string
	// KubeletVersion is what the kubelet installed from the RPM printed.
	KubeletVersion string
	// ShimRebuilt is the dockershim's the rebuild made, SameShimRPM
	// whether its subpackage is the released one byte for byte.
	ShimRebuilt string
	SameShimRPM bool
}

// Check verifies the released spec, SRPM and RPM: the spec's PatchN list
// is the series in order; the SRPM holds that spec, those patches byte for
// byte and Source0 equal to the orig tarball; rpmbuild --rebuild of the
// SRPM gives a kubelet with the released sha256; the RPM's header, its
// file list and modes, and an install into a throwaway root (rpm --root
// --nodeps -i) whose kubelet --version is run.
func Check(ctx context.Context, in CheckInput) (*CheckResult, error) {
	r := in.Release
	res := &CheckResult{}
	want := make([]string, len(in.Patches))
	for i, p := range in.Patches {
		want[i] = PatchFileName(p)
	}
	spec, err := os.ReadFile(in.Spec)
	if err != nil {
		return nil, err
	}
	got, err := SpecPatches(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(in.Spec), err)
	}
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("%s: the PatchN lines are not the series: %s", filepath.Base(in.Spec), listDiff(got, want))
	}
	if !strings.Contains(string(spec), "\n%autosetup -p1 ") {
		return nil, fmt.Errorf("%s does not apply its patches with %%autosetup -p1", filepath.Base(in.Spec))
	}
	fmt.Fprintf(in.Log, "ok   %s: Patch1..Patch%d are the %d patches of %s in application order\n", filepath.Base(in.Spec), len(want), len(want), strings.Join(r.Series.For(in.Variant), ", "))

	top, err := os.MkdirTemp(in.TmpParent, CheckScratch)
	if err != nil {
		return nil, err
	}
	defer fsutil.RemoveAll(top)
	t, err := newTool(ctx, top, r)
	if err != nil {
		return nil, err
	}
	if in.ColdCache {
		t.env = append(t.env, "GOCACHE="+filepath.Join(top, "gocache"))
	}
	if err := t.checkSRPM(ctx, in, spec, want); err != nil {
		return nil, err
	}
	nvr, err := NVR(r, in.Version)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	rebuilt, err := t.rebuild(ctx, in.SRPM, nvr)
	if err != nil {
		return nil, err
	}
	res.RebuildTook = time.Since(start)
	if res.Rebuilt, res.SameRPM, err = t.checkRebuilt(ctx, in, rebuilt, BinPath, in.SHA256, in.RPM); err != nil {
		return nil, err
	}
	is := in.SHA256Is
	if is == "" {
		is = "the released binary's"
	}
	fmt.Fprintf(in.Log, "ok   rpmbuild --rebuild %s in %s: kubelet sha256 %s (%s); the RPM %s\n",
		filepath.Base(in.SRPM), res.RebuildTook.Round(100*time.Millisecond), res.Rebuilt, is, sameWords(res.SameRPM))
	if in.ShimSHA256 != "" {
		shim, err := t.subpackage(nvr)
		if err != nil {
			return nil, err
		}
		if res.ShimRebuilt, res.SameShimRPM, err = t.checkRebuilt(ctx, in, shim, ShimBinPath, in.ShimSHA256, in.ShimRPM); err != nil {
			return nil, err
		}
		fmt.Fprintf(in.Log, "ok   the same rebuild's %s subpackage: dockershim sha256 %s (the released binary's); the RPM %s\n", ShimName, res.ShimRebuilt, sameWords(res.SameShimRPM))
	}

	if err := t.checkRPM(ctx, in, nvr, res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkRebuilt checks the binary at path in a rebuilt package has the
// released sha256 (want), and says whether the package is the released
// one byte for byte.
func (t *tool) checkRebuilt(ctx context.Context, in CheckInput, pkg, path, want, released string) (string, bool, error) {
	got, err := t.fileDigest(ctx, pkg, path)
	if err != nil {
		return "", false, err
	}
	if got != want {
		return "", false, fmt.Errorf("rpmbuild --rebuild %s built a %s with sha256 %s; the released one is %s", filepath.Base(in.SRPM), filepath.Base(path), got, want)
	}
	same, err := sameFile(pkg, released)
	return got, same, err
}

// sameWords says how a rebuilt RPM compares with the released one.
func sameWords(same bool) string {
	if same {
		return "is byte-identical to the released one"
	}
	return "differs from the released one byte for byte (rpm or its macros differ from the packaging machine's)"
}

// checkSRPM unpacks the SRPM as a packager does (rpm -i into _topdir) and
// compares its spec and sources with what they must be.
func (t *tool) checkSRPM(ctx context.Context, in CheckInput, spec []byte, want []string) error {
	name := filepath.Base(in.SRPM)
	// The header keeps the patch names but not their numbers (the order is
	// the spec's, checked above): the same set of files.
	hdr, err := t.query(ctx, in.SRPM, "[%{PATCH}\n]")
	if err != nil {
		return err
	}
	fromHeader := strings.Fields(hdr)
	slices.Sort(fromHeader)
	sorted := slices.Sorted(slices.Values(want))
	if !slices.Equal(fromHeader, sorted) {
		return fmt.Errorf("%s's header lists the patches\n  %s\nthe series apply\n  %s", name, strings.Join(fromHeader, "\n  "), strings.Join(sorted, "\n  "))
	}
	if _, err := t.run(ctx, "rpm", "-i", in.SRPM); err != nil {
		return err
	}
	inSRPM, err := os.ReadFile(filepath.Join(t.top, "SPECS", SpecName))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if string(inSRPM) != string(spec) {
		return fmt.Errorf("%s holds a %s that differs from %s", name, SpecName, filepath.Base(in.Spec))
	}
	src := filepath.Join(t.top, "SOURCES")
	for _, p := range in.Patches {
		data, err := os.ReadFile(filepath.Join(src, PatchFileName(p)))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if string(data) != string(p.Data) {
			return fmt.Errorf("%s: %s differs from %s (%s)", name, PatchFileName(p), p.Name, p.Source)
		}
	}
	if same, err := sameFile(filepath.Join(src, in.Source0), in.Orig); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	} else if !same {
		return fmt.Errorf("%s: Source0 %s differs from %s", name, in.Source0, filepath.Base(in.Orig))
	}
	fmt.Fprintf(in.Log, "ok   %s holds that spec, the %d patches byte for byte, and Source0 %s = %s\n", name, len(in.Patches), in.Source0, filepath.Base(in.Orig))
	if in.CToolchain != "" {
		if same, err := sameFile(filepath.Join(src, in.CToolchain), in.CToolchainPath); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		} else if !same {
			return fmt.Errorf("%s: Source3 %s differs from the pinned C toolchain %s", name, in.CToolchain, in.CToolchainPath)
		}
		fmt.Fprintf(in.Log, "ok   %s holds the pinned C toolchain as Source3 %s\n", name, in.CToolchain)
	}
	return nil
}

var glibcRequireRE = regexp.MustCompile(`\(GLIBC_([0-9.]+)\)`)

// RequiresFloor fails when rpm's Requires (as rpm -qp --requires prints
// them) name a glibc symbol version newer than floor: yum would refuse the
// package on such a system, and the loader the kubelet.
func RequiresFloor(requires, floor string) error {
	var over []string
	for _, m := range glibcRequireRE.FindAllStringSubmatch(requires, -1) {
		if glibc.Compare(m[1], floor) > 0 && !slices.Contains(over, "GLIBC_"+m[1]) {
			over = append(over, "GLIBC_"+m[1])
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("requires %s, newer than the glibc floor %s", strings.Join(over, ", "), floor)
	}
	return nil
}

// checkHeader checks a package's N-V-R.A, its files' owners, modes and
// flags (wantModes: path -> "<perms> <fflags>"), and that its Requires name
// no glibc above the floor.
func (t *tool) checkHeader(ctx context.Context, in CheckInput, pkg, nvra string, wantModes map[string]string) error {
	name := filepath.Base(pkg)
	info, err := t.query(ctx, pkg, "%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\n")
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(info); got != nvra {
		return fmt.Errorf("%s is %s, want %s", name, got, nvra)
	}
	files, err := t.query(ctx, pkg, "[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags} %{FILENAMES}\n]")
	if err != nil {
		return err
	}
	modes := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(files), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 { // no flags
			f = []string{f[0], f[1], "", f[2]}
		}
		if len(f) != 4 {
			return fmt.Errorf("%s: cannot read file line %q", name, l)
		}
		if f[1] != "root:root" {
			return fmt.Errorf("%s: %s is owned by %s", name, f[3], f[1])
		}
		modes[f[3]] = f[0] + " " + f[2]
	}
	for p, want := range wantModes {
		if got, ok := modes[p]; !ok {
			return fmt.Errorf("%s does not install %s:\n%s", name, p, files)
		} else if got != want {
			return fmt.Errorf("%s: %s is %q, want %q (mode, flags)", name, p, got, want)
		}
	}
	reqs, err := t.run(ctx, "rpm", "-qp", "--requires", pkg)
	if err != nil {
		return err
	}
	fmt.Fprintf(in.Log, "rpm -qp --requires %s:\n  %s\n", name, strings.ReplaceAll(strings.TrimSpace(string(reqs)), "\n", "\n  "))
	if err := RequiresFloor(string(reqs), in.Release.CToolchain.GlibcFloor); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// checkRPM inspects the released RPMs' headers and installs them into a
// throwaway root: the kubelet's, then the shim's.
func (t *tool) checkRPM(ctx context.Context, in CheckInput, nvr string, res *CheckResult) error {
	name := filepath.Base(in.RPM)
	wantModes := map[string]string{BinPath: "-rwxr-xr-x ", UnitPath(in.Release): "-rw-r--r-- ", ManifestsDir: "drwxr-xr-x "}
	if ShipsFlags(in.Release) {
		wantModes[SysconfigPath] = "-rw-r--r-- cn"
	}
	if err := t.checkHeader(ctx, in, in.RPM, nvr+".x86_64", wantModes); err != nil {
		return err
	}
	if in.ShimSHA256 != "" {
		if err := t.checkHeader(ctx, in, in.ShimRPM, ShimName+strings.TrimPrefix(nvr, Name)+".x86_64",
			map[string]string{ShimBinPath: "-rwxr-xr-x ", ShimUnitPath: "-rw-r--r-- ", ShimSysconfigPath: "-rw-r--r-- cn"}); err != nil {
			return err
		}
	}

	root := filepath.Join(t.top, "root")
	rootArgs := []string{"--root", root, "--dbpath", "/var/lib/rpm"}
	// A shell there: rpm runs the scriptlets chrooted into the root.
	if err := scratchroot.Prepare(root); err != nil {
		return err
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: append(rootArgs, "--initdb"), Env: t.env}); err != nil {
		return err
	}
	start := time.Now()
	if _, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: append(rootArgs, "--nodeps", "-i", in.RPM), Env: t.env}); err != nil {
		return err
	}
	q, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: append(rootArgs, "-q", Name), Env: t.env})
	if err != nil {
		return err
	}
	res.NEVRA = strings.TrimSpace(string(q))
	if res.NEVRA != nvr+".x86_64" {
		return fmt.Errorf("the throwaway root's rpm database has %q, want %s.x86_64", res.NEVRA, nvr)
	}
	// As the official RPM: installing starts and restarts nothing.
	if calls, _ := scratchroot.Calls(root); len(calls) > 0 {
		return fmt.Errorf("installing %s called systemd's tools:\n%s", name, strings.Join(calls, "\n"))
	}
	bin := filepath.Join(root, BinPath)
	if sum, err := checksums.SHA256(bin); err != nil {
		return err
	} else if sum != in.SHA256 {
		return fmt.Errorf("the kubelet rpm installed has sha256 %s, want %s", sum, in.SHA256)
	}
	out, err := execx.Run(ctx, execx.Cmd{Name: bin, Args: []string{"--version"}})
	if err != nil {
		return err
	}
	res.KubeletVersion = strings.TrimSpace(string(out))
	if res.KubeletVersion != in.Kubelet {
		return fmt.Errorf("the kubelet installed from %s prints %q, want %q", name, res.KubeletVersion, in.Kubelet)
	}
	fmt.Fprintf(in.Log, "ok   %s (%s) installs into a throwaway root with rpm --root --nodeps -i (%s); its kubelet --version: %s\n",
		name, res.NEVRA, time.Since(start).Round(10*time.Millisecond), res.KubeletVersion)
	if in.ShimSHA256 == "" {
		return nil
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: append(rootArgs, "--nodeps", "-i", in.ShimRPM), Env: t.env}); err != nil {
		return err
	}
	if calls, _ := scratchroot.Calls(root); len(calls) > 0 {
		return fmt.Errorf("installing %s called systemd's tools:\n%s", filepath.Base(in.ShimRPM), strings.Join(calls, "\n"))
	}
	shim := filepath.Join(root, ShimBinPath)
	if sum, err := checksums.SHA256(shim); err != nil {
		return err
	} else if sum != in.ShimSHA256 {
		return fmt.Errorf("the dockershim rpm installed has sha256 %s, want %s", sum, in.ShimSHA256)
	}
	out, err = execx.Run(ctx, execx.Cmd{Name: shim, Args: []string{"--version"}})
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(out)); got != in.Shim {
		return fmt.Errorf("the dockershim installed from %s prints %q, want %q", filepath.Base(in.ShimRPM), got, in.Shim)
	}
	fmt.Fprintf(in.Log, "ok   %s installs beside it, starting nothing; its dockershim --version: %s\n", filepath.Base(in.ShimRPM), in.Shim)
	return nil
}

// listDiff says how the spec's patch list got differs from the series'
// want: what is missing, what is extra, or else that the order differs.
func listDiff(got, want []string) string {
	var missing, extra []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "not in the series "+strings.Join(extra, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "the same patches in another order; the series apply "+strings.Join(want, ", "))
	}
	return strings.Join(parts, "; ")
}
