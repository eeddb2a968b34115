package rpm

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/base/testtool"
	"kubelet-toolchain/scripts/internal/packaging/official"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
)

func release() *matrix.Release {
	return &matrix.Release{Release: "1.9.11", ModuleSum: "h1:PFbmFeh46oRlAFz2MvCEbTA3ur8GKTi+08ur4xtJB10=",
		BuildDate: time.Unix(1538170522, 0).UTC(), Era: matrix.EraGodeps, CGO: true, Go: "go1.26.8",
		Series: matrix.Series{Build: "k19-build", Defaults: "secure-defaults", Fixes: "k19-fixes"}}
}

func patch(series, name, subject string) quilt.Patch {
	return quilt.Patch{Series: series, Name: series + "/" + name, Data: []byte("From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] " + subject + "\n\nbody\n")}
}

func TestRelease(t *testing.T) {
	r := release()
	for version, want := range map[string]string{
		"1.9.11+k19-fixes": "1.k19_fixes",
		"1.9.11+k19-build": "1.k19_build",
		"1.9.11+vanilla":   "1.vanilla",
		// A package revision (versions.yaml packageRevision).
		"1.9.11+k19-fixes.2": "1.k19_fixes.2",
	} {
		if got, err := Release(r, version); err != nil || got != want {
			t.Errorf("Release(%s) = %q, %v; want %q", version, got, err, want)
		}
	}
	for _, bad := range []string{"1.9.12+k19-fixes", "1.9.11", "1.9.11+", "1.9.11+a b"} {
		if got, err := Release(r, bad); err == nil {
			t.Errorf("Release(%s) = %q, want an error", bad, got)
		}
	}
	if nvr, _ := NVR(r, "1.9.11+k19-fixes"); nvr != "kubelet-1.9.11-1.k19_fixes" {
		t.Errorf("NVR = %s", nvr)
	}
}

// The README's claim: ours sorts above upstream's own package of the
// release (kubelet-1.9.11-0), below the next release's, and patched above
// vanilla -- as rpm itself compares them.
func TestReleaseSortsAsREADMESays(t *testing.T) {
	testtool.Need(t, "rpm")
	r := release()
	patched, _ := Release(r, "1.9.11+k19-fixes")
	vanilla, _ := Release(r, "1.9.11+k19-build")
	revised, _ := Release(r, "1.9.11+k19-fixes.2")
	order := []string{"1.9.11-0", "1.9.11-0.1", "1.9.11-" + vanilla, "1.9.11-" + patched, "1.9.11-" + patched + ".el7", "1.9.11-" + revised, "1.9.12-0"}
	for i := 0; i+1 < len(order); i++ {
		out, err := exec.Command("rpm", "--eval", `%{lua: print(rpm.vercmp("`+order[i]+`", "`+order[i+1]+`"))}`).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != "-1" {
			t.Errorf("rpm.vercmp(%s, %s) = %s, want -1", order[i], order[i+1], got)
		}
	}
}

func TestSpec(t *testing.T) {
	r := release()
	patches := []quilt.Patch{
		patch("k19-build", "0001-ugorji.patch", "ugorji/go/codec: use a valid base64 alphabet"),
		patch("k19-build", "0002-add-cmd-podhash-release.go.patch", "k19-build: add cmd/podhash/release.go"),
		patch("secure-defaults", "0001-add-zz_godebug.go.patch", "secure-defaults: add cmd/kubelet/zz_godebug.go"),
		patch("k19-fixes", "0001-hash.patch", "kubelet: 100% compatible hashes"),
	}
	in := SpecInput{Release: r, Variant: matrix.Patched, Version: "1.9.11+k19-fixes", SHA256: strings.Repeat("ab", 32),
		Source0: "kubernetes-1.9.11-restored.tar.gz", TopDir: "kubernetes-1.9.11", Patches: patches, CToolchain: "zig.tgz",
		BuildCommand: `env GOTOOLCHAIN=go1.26.8 CGO_ENABLED=1 GOPATH="$PWD" go build -ldflags "-X 'a.b=50%'" -o kubelet k8s.io/kubernetes/cmd/kubelet`}
	data, err := Spec(in)
	if err != nil {
		t.Fatal(err)
	}
	spec := string(data)
	names, err := SpecPatches(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"k19-build-0001-ugorji.patch", "k19-build-0002-add-cmd-podhash-release.go.patch", "secure-defaults-0001-add-zz_godebug.go.patch", "k19-fixes-0001-hash.patch"}
	if !slices.Equal(names, want) {
		t.Errorf("PatchN in order = %v, want %v", names, want)
	}
	for _, line := range []string{
		"Version:        1.9.11\n",
		"Release:        1.k19_fixes%{?dist}\n",
		"Source0:        kubernetes-1.9.11-restored.tar.gz\n",
		"Patch1:         k19-build-0001-ugorji.patch\n",
		"Patch4:         k19-fixes-0001-hash.patch\n",
		"License:        Apache-2.0\n",
		"URL:            https://github.com/kubernetes/kubernetes\n",
		"Source3:        zig.tgz\n",
		"\n%autosetup -p1 -n kubernetes-1.9.11\n",
		"sha512sum -c --quiet\nrm -rf %{_builddir}/ctoolchain && mkdir %{_builddir}/ctoolchain\ntar -xzf %{SOURCE3} -C %{_builddir}/ctoolchain --strip-components=1\n",
		"\nCTOOLCHAIN=%{_builddir}/ctoolchain\nenv GOTOOLCHAIN=",
		// The build line verbatim but for the pin, which is a macro, and %
		// escaped for rpm.
		"\nenv GOTOOLCHAIN=%{gotoolchain} CGO_ENABLED=1 GOPATH=\"$PWD\" go build -ldflags \"-X 'a.b=50%%'\" -o kubelet k8s.io/kubernetes/cmd/kubelet\n",
		"%{!?gotoolchain:%global gotoolchain go1.26.8}\n",
		"%global debug_package %{nil}\n",
		"%global __os_install_post %{nil}\n",
		"%global _build_id_links none\n",
		// 1.9.11 of 2018: where the official RPM had its unit, and the link
		// kept working when the unit moves.
		"install -D -p -m 0644 %{SOURCE1} %{buildroot}/etc/systemd/system/kubelet.service\n",
		"\n/etc/systemd/system/kubelet.service\n%dir /etc/kubernetes/manifests\n",
		"\n%posttrans\nlink=/etc/systemd/system/multi-user.target.wants/kubelet.service\n",
		"\n%postun\n",
		"\tif [ -f \"$f.rpmsave\" ] && { [ ! -e \"$f\" ] || [ \"$f.rpmsave\" -nt \"$f\" ]; }; then\n",
		"\n%posttrans\nlink=",
		"\n* Fri Sep 28 2018 Kubelet Toolchain <toolchain@kubelet-toolchain.invalid> - 1.9.11-1.k19_fixes\n",
		"\n- k19-build (Go compatibility fixes):\n  0001 ugorji/go/codec: use a valid base64 alphabet\n  0002 add cmd/podhash/release.go\n",
		"\n- secure-defaults (Go's current TLS and X.509 defaults):\n  0001 add cmd/kubelet/zz_godebug.go\n",
		"\n- k19-fixes (production fixes):\n  0001 kubelet: 100%% compatible hashes\n",
		"#   " + strings.Repeat("ab", 32) + "\n",
	} {
		if !strings.Contains(spec, line) {
			t.Errorf("spec lacks %q:\n%s", line, spec)
		}
	}
	// Every % is a macro, an escaped %%, or a spec directive.
	for _, l := range strings.Split(spec, "\n") {
		if strings.HasPrefix(l, "#") && strings.Contains(l, "%") {
			t.Errorf("a comment with %% (rpm warns, and expands it): %q", l)
		}
	}
	// A release of 2019-03 on: the unit where the RPMs of then had it.
	date := r.BuildDate
	r.BuildDate = official.UnitMoved
	data, _ = Spec(in)
	if !strings.Contains(string(data), "\n/usr/lib/systemd/system/kubelet.service\n") {
		t.Errorf("a release of %s: the unit is not in /usr/lib/systemd/system:\n%s", r.BuildDate, data)
	}
	r.BuildDate = date
	// 1.9 ships no /etc/sysconfig/kubelet, as the official RPM; 1.11 on do.
	if strings.Contains(spec, "/etc/sysconfig/kubelet\n%changelog") || strings.Contains(spec, "Source2:") {
		t.Errorf("a 1.9 spec ships /etc/sysconfig/kubelet:\n%s", spec)
	}
	r.Release = "1.13.12"
	in.Version = "1.13.12+k19-fixes"
	data, _ = Spec(in)
	if !strings.Contains(string(data), "%config(noreplace) %{_sysconfdir}/sysconfig/kubelet\n") {
		t.Errorf("a 1.13 spec without %%config(noreplace) /etc/sysconfig/kubelet:\n%s", data)
	}
	r.Release, in.Version = "1.9.11", "1.9.11+k19-fixes"
	r.CGO = false
	data, _ = Spec(in)
	if strings.Contains(string(data), "glibc-devel") {
		t.Error("a cgo-off release BuildRequires glibc-devel")
	}
	in.BuildCommand = "env GOTOOLCHAIN=go1.25.0 go build"
	if _, err := Spec(in); err == nil {
		t.Error("a build line with another toolchain accepted")
	}
}

func TestSpecPatchesRefusesGaps(t *testing.T) {
	if _, err := SpecPatches([]byte("Patch1: a.patch\nPatch3: c.patch\n")); err == nil {
		t.Error("Patch1, Patch3 accepted")
	}
	got, err := SpecPatches([]byte("Source0: x\nPatch1:  a.patch\n# c\nPatch2:\tb.patch\n"))
	if err != nil || !slices.Equal(got, []string{"a.patch", "b.patch"}) {
		t.Errorf("SpecPatches = %v, %v", got, err)
	}
}

func TestListDiff(t *testing.T) {
	for _, c := range []struct {
		got, want []string
		says      string
	}{
		{[]string{"a", "c"}, []string{"a", "b", "c"}, "missing b"},
		{[]string{"a", "x", "b"}, []string{"a", "b"}, "not in the series x"},
		{[]string{"b", "a"}, []string{"a", "b"}, "the same patches in another order; the series apply a, b"},
	} {
		if got := listDiff(c.got, c.want); got != c.says {
			t.Errorf("listDiff(%v, %v) = %q, want %q", c.got, c.want, got, c.says)
		}
	}
}

// A package revision gets a changelog entry of its own, dated at the
// revision and saying what changed, above the first packages' entry.
func TestChangelogPackageRevision(t *testing.T) {
	r := release()
	r.PackageRevision = &matrix.PackageRevision{Number: 2, Date: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), Changes: "static pods keep their UID"}
	version := r.PackageVersion(matrix.Patched)
	rel, err := Release(r, version)
	if err != nil || version != "1.9.11+k19-fixes.2" {
		t.Fatalf("version %s, release %s, %v", version, rel, err)
	}
	got := Changelog(r, matrix.Patched, version, rel, nil)
	for _, want := range []string{"* Wed Nov 25 2026 Kubelet Toolchain <toolchain@kubelet-toolchain.invalid> - 1.9.11-1.k19_fixes.2\n- Package revision 2: static pods keep their UID\n",
		"\n* Fri Sep 28 2018 Kubelet Toolchain <toolchain@kubelet-toolchain.invalid> - 1.9.11-1.k19_fixes\n- First packages of this release.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("changelog lacks %q:\n%s", want, got)
		}
	}
}

func TestRequiresFloor(t *testing.T) {
	// rpm -qp --requires of a kubelet built against Debian 12's glibc, then
	// of one built with the pinned C toolchain.
	debian12 := "libc.so.6()(64bit)\nlibc.so.6(GLIBC_2.2.5)(64bit)\nlibc.so.6(GLIBC_2.32)(64bit)\nlibc.so.6(GLIBC_2.34)(64bit)\nrtld(GNU_HASH)\n"
	err := RequiresFloor(debian12, "2.17")
	if err == nil || !strings.Contains(err.Error(), "GLIBC_2.32, GLIBC_2.34") {
		t.Errorf("Debian 12's Requires: %v", err)
	}
	if err := RequiresFloor("libc.so.6(GLIBC_2.2.5)(64bit)\nlibpthread.so.0(GLIBC_2.3.2)(64bit)\niptables\n", "2.17"); err != nil {
		t.Errorf("floor-conforming Requires: %v", err)
	}
}
