// Package sbom writes and checks the SPDX 2.3 JSON software bill of
// materials of a packaged kubelet: the binary, the kubernetes module it is
// built from, every dependency module@version compiled in (with lock
// substitutions and go.mod replacements noted), the Go standard library,
// and each applied patch as a file with PATCH_APPLIED relationships to the
// modules it changes. Documents are built and parsed with the SPDX
// project's Go library.
package sbom

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
	"github.com/spdx/tools-golang/spdxlib"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
)

// Input is everything a document is made from.
type Input struct {
	Release *matrix.Release
	Variant matrix.Variant
	// Version is the package version, e.g. 1.9.11+k19-fixes.
	Version string
	// Binary names the binary described: kubelet ("" too), or dockershim.
	Binary string
	// BinarySHA256 is its sha256 (hex).
	BinarySHA256 string
	// Tree is the built tree (to tell staging from vendored code).
	Tree    string
	Modules []Module
	Patches []quilt.Patch
	// PatchDir is where the patches are in the distributed tarballs, e.g.
	// "patches" (names are PatchDir/<series>/<file>).
	PatchDir string
}

const (
	// Namespaces are unique per binary (its sha256 is part of them) and
	// stable across rebuilds, which a random UUID would not be.
	namespaceBase = "https://kubelet-toolchain.invalid/spdx/"
	noAssertion   = "NOASSERTION"

	// Element ids without the "SPDXRef-" the library adds when writing.
	kubernetesID = "Package-go-module-k8s.io-kubernetes"
	stdlibID     = "Package-go-stdlib"
)

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func elementID(prefix, s string) common.ElementID {
	return common.ElementID(prefix + strings.Trim(idUnsafe.ReplaceAllString(s, "-"), "-"))
}

// purl is the package URL of a Go module (version percent-encoded, so
// +incompatible stays one token).
func purl(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "pkg:golang/" + strings.Join(segs, "/") + "@" + strings.ReplaceAll(url.PathEscape(version), "+", "%2B")
}

func rel(a common.ElementID, typ string, b common.ElementID, comment string) *spdx.Relationship {
	return &spdx.Relationship{
		RefA: common.MakeDocElementID("", string(a)), RefB: common.MakeDocElementID("", string(b)),
		Relationship: typ, RelationshipComment: comment,
	}
}

// Generate builds the document.
func Generate(in Input) (*spdx.Document, error) {
	r := in.Release
	created := r.BuildDate.UTC().Format(time.RFC3339)
	binary := in.Binary
	if binary == "" {
		binary = "kubelet"
	}
	kubeletID := common.ElementID("Package-" + binary)
	summary := "Kubernetes node agent, linux/amd64"
	if binary != "kubelet" {
		summary = binary + " of Kubernetes, served on its own, linux/amd64"
	}
	name := binary + "-" + in.Version
	doc := &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      name,
		DocumentNamespace: namespaceBase + url.PathEscape(name) + "-" + in.BinarySHA256,
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "kubelet-toolchain"}, {CreatorType: "Organization", Creator: "Kubelet Toolchain"}},
			// The release's build date (SOURCE_DATE_EPOCH): the document
			// is as reproducible as the binary it describes.
			Created: created,
		},
	}
	series := r.Series.For(in.Variant)
	gitVersion := r.GitVersion(in.Variant)
	cgo := "off"
	if r.CGO {
		// The toolchain's startup files (crt1.o and the like, from glibc's
		// sources) are linked in, as the build machine's were before.
		cgo = fmt.Sprintf("on, C compiled and linked by %s targeting %s (its glibc startup files linked in)", r.CToolchain.NPM, r.CToolchain.Target())
	}
	if len(r.Tags) > 0 {
		cgo += ", -tags " + strings.Join(r.Tags, ",")
	}
	mode := "module mode, -mod=vendor"
	if r.Era == matrix.EraGodeps {
		mode = "GOPATH mode"
	}
	kubelet := &spdx.Package{
		PackageName:               binary,
		PackageSPDXIdentifier:     kubeletID,
		PackageVersion:            in.Version,
		PackageFileName:           binary,
		PackageDownloadLocation:   noAssertion,
		FilesAnalyzed:             false,
		IsFilesAnalyzedTagPresent: true,
		PackageChecksums:          []common.Checksum{{Algorithm: common.SHA256, Value: in.BinarySHA256}},
		PackageLicenseConcluded:   noAssertion,
		PackageLicenseDeclared:    "Apache-2.0",
		PackageCopyrightText:      noAssertion,
		PackageSummary:            summary,
		PackageComment: fmt.Sprintf("`%s --version` prints Kubernetes %s. Built from %s@%s with %s (%s, cgo %s, -trimpath, empty build id); applied series: %s.",
			binary, gitVersion, KubernetesModule, r.ModuleVersion(), r.Go, mode, cgo, orNone(series)),
		PrimaryPackagePurpose: "APPLICATION",
		BuiltDate:             created,
		ReleaseDate:           created,
	}
	k8s := &spdx.Package{
		PackageName:               KubernetesModule,
		PackageSPDXIdentifier:     kubernetesID,
		PackageVersion:            r.ModuleVersion(),
		PackageDownloadLocation:   noAssertion,
		FilesAnalyzed:             false,
		IsFilesAnalyzedTagPresent: true,
		PackageSourceInfo:         fmt.Sprintf("module zip %s@%s, %s (checksum database)", KubernetesModule, r.ModuleVersion(), r.ModuleSum),
		PackageLicenseConcluded:   noAssertion,
		PackageLicenseDeclared:    "Apache-2.0",
		PackageCopyrightText:      noAssertion,
		PackageExternalReferences: []*spdx.PackageExternalReference{{Category: common.CategoryPackageManager, RefType: common.TypePackageManagerPURL, Locator: purl(KubernetesModule, r.ModuleVersion())}},
		PrimaryPackagePurpose:     "SOURCE",
	}
	if r.GitCommit != "" {
		k8s.PackageSourceInfo += "; upstream commit " + r.GitCommit
	}
	stdlib := &spdx.Package{
		PackageName:               "stdlib",
		PackageSPDXIdentifier:     stdlibID,
		PackageVersion:            r.Go,
		PackageDownloadLocation:   noAssertion,
		FilesAnalyzed:             false,
		IsFilesAnalyzedTagPresent: true,
		PackageLicenseConcluded:   noAssertion,
		PackageLicenseDeclared:    "BSD-3-Clause",
		PackageCopyrightText:      noAssertion,
		PackageComment:            "the Go standard library of the pinned toolchain",
		PackageExternalReferences: []*spdx.PackageExternalReference{{Category: common.CategoryPackageManager, RefType: common.TypePackageManagerPURL, Locator: purl("stdlib", r.Go)}},
		PrimaryPackagePurpose:     "LIBRARY",
	}
	doc.Packages = []*spdx.Package{kubelet, k8s, stdlib}
	doc.Relationships = []*spdx.Relationship{
		rel("DOCUMENT", common.TypeRelationshipDescribe, kubeletID, ""),
		rel(kubeletID, common.TypeRelationshipGeneratedFrom, kubernetesID, ""),
		rel(kubeletID, common.TypeRelationshipContains, kubernetesID, ""),
		rel(kubeletID, common.TypeRelationshipContains, stdlibID, ""),
	}
	byID := map[string]*spdx.Package{KubernetesModule: k8s}
	seen := map[common.ElementID]bool{kubeletID: true, kubernetesID: true, stdlibID: true}
	var substituted int
	for _, m := range in.Modules {
		id := elementID("Package-go-module-", m.Path+"-"+m.Version)
		if seen[id] {
			return nil, fmt.Errorf("two modules map to SPDX id %s", id)
		}
		seen[id] = true
		p := &spdx.Package{
			PackageName:               m.Path,
			PackageSPDXIdentifier:     id,
			PackageVersion:            m.Version,
			PackageDownloadLocation:   noAssertion,
			FilesAnalyzed:             false,
			IsFilesAnalyzedTagPresent: true,
			PackageSourceInfo:         "module zip " + m.ID() + ", " + m.Sum,
			PackageLicenseConcluded:   noAssertion,
			PackageLicenseDeclared:    noAssertion,
			PackageCopyrightText:      noAssertion,
			PackageComment:            strings.Join(m.Notes, "; "),
			PackageExternalReferences: []*spdx.PackageExternalReference{{Category: common.CategoryPackageManager, RefType: common.TypePackageManagerPURL, Locator: purl(m.Path, m.Version)}},
			PrimaryPackagePurpose:     "LIBRARY",
		}
		if m.Substituted {
			substituted++
		}
		byID[m.ID()] = p
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, rel(kubeletID, common.TypeRelationshipContains, id, ""))
	}

	// Patches: one file element each, PATCH_APPLIED to every module it
	// changes; the modules' comments name them too.
	patchedBy := map[string][]string{}
	var notCompiled []string
	for _, pt := range in.Patches {
		data := pt.Data
		s1, s256 := sha1.Sum(data), sha256.Sum256(data)
		id := elementID("File-patch-", pt.Name)
		if seen[id] {
			return nil, fmt.Errorf("two patches map to SPDX id %s", id)
		}
		seen[id] = true
		fname := "./" + strings.TrimPrefix(in.PatchDir+"/"+pt.Name, "/")
		doc.Files = append(doc.Files, &spdx.File{
			FileName:           fname,
			FileSPDXIdentifier: id,
			FileTypes:          []string{"TEXT"},
			Checksums: []common.Checksum{
				{Algorithm: common.SHA1, Value: hex.EncodeToString(s1[:])},
				{Algorithm: common.SHA256, Value: hex.EncodeToString(s256[:])},
			},
			LicenseConcluded:  noAssertion,
			FileCopyrightText: noAssertion,
			FileComment:       fmt.Sprintf("series %s, from %s; changes %s", pt.Series, pt.Source, strings.Join(pt.Paths, ", ")),
		})
		touched := map[string]bool{}
		for _, path := range pt.Paths {
			mod := ModuleOf(path, in.Modules, in.Tree)
			if mod == "" {
				notCompiled = append(notCompiled, fmt.Sprintf("%s changes %s, whose module is not compiled into %s", pt.Name, path, binary))
				continue
			}
			touched[mod] = true
		}
		for _, mod := range sortedKeys(touched) {
			patchedBy[mod] = append(patchedBy[mod], pt.Name)
			doc.Relationships = append(doc.Relationships, rel(id, common.TypeRelationshipPatchApplied, byID[mod].PackageSPDXIdentifier, ""))
		}
	}
	for _, mod := range sortedKeys(patchedBy) {
		p := byID[mod]
		note := "patched by this build: " + strings.Join(patchedBy[mod], ", ")
		if p.PackageComment != "" {
			note = p.PackageComment + "; " + note
		}
		p.PackageComment = note
	}
	doc.DocumentComment = fmt.Sprintf("%s %s (Kubernetes %s, %s variant): %d dependency modules compiled in, %d of them at a version this build's lock chose instead of upstream's pin (reasons in each package's comment); %d patches applied to %d modules (PATCH_APPLIED relationships).",
		binary, in.Version, r.ModuleVersion(), in.Variant, len(in.Modules), substituted, len(in.Patches), len(patchedBy))
	if len(notCompiled) > 0 {
		doc.DocumentComment += " Patched but not compiled in: " + strings.Join(notCompiled, "; ") + "."
	}
	return doc, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Marshal renders doc as indented SPDX JSON.
func Marshal(doc *spdx.Document) ([]byte, error) {
	var buf bytes.Buffer
	if err := spdxjson.Write(doc, &buf, spdxjson.Indent("  "), spdxjson.EscapeHTML(false)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Summary is what Validate found.
type Summary struct {
	Packages int
	Files    int
	// Patched lists module@version (or k8s.io/kubernetes@version) of every
	// package a patch file is PATCH_APPLIED to, sorted.
	Patched []string
}

// Validate parses data back with the SPDX library and checks it: the
// library's own validation, the fields SPDX 2.3 requires, unique ids,
// a described application (the kubelet, or dockershim), every module in want present at its version, and
// every module in wantPatched (path@version, or k8s.io/kubernetes) patched
// by a PATCH_APPLIED file.
func Validate(data []byte, want []Module, wantPatched []string) (*Summary, error) {
	var doc spdx.Document
	if err := spdxjson.ReadInto(bytes.NewReader(data), &doc); err != nil {
		return nil, fmt.Errorf("parsing SPDX JSON: %w", err)
	}
	if err := spdxlib.ValidateDocument(&doc); err != nil {
		return nil, err
	}
	var problems []string
	bad := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
	if doc.SPDXVersion != spdx.Version {
		bad("spdxVersion is %q, want %q", doc.SPDXVersion, spdx.Version)
	}
	if doc.DataLicense != spdx.DataLicense {
		bad("dataLicense is %q", doc.DataLicense)
	}
	if doc.SPDXIdentifier != "DOCUMENT" {
		bad("SPDXID is %q", doc.SPDXIdentifier)
	}
	if doc.DocumentName == "" {
		bad("no document name")
	}
	if u, err := url.Parse(doc.DocumentNamespace); err != nil || !u.IsAbs() || u.Fragment != "" {
		bad("documentNamespace %q is not an absolute URI without a fragment", doc.DocumentNamespace)
	}
	if doc.CreationInfo == nil || len(doc.CreationInfo.Creators) == 0 {
		bad("no creators")
	} else if _, err := time.Parse(time.RFC3339, doc.CreationInfo.Created); err != nil || !strings.HasSuffix(doc.CreationInfo.Created, "Z") {
		bad("created %q is not YYYY-MM-DDThh:mm:ssZ", doc.CreationInfo.Created)
	}
	ids := map[common.ElementID]string{}
	byName := map[string]*spdx.Package{}
	for _, p := range doc.Packages {
		if p.PackageName == "" || p.PackageDownloadLocation == "" {
			bad("package %s lacks name or downloadLocation", p.PackageSPDXIdentifier)
		}
		if p.PackageSPDXIdentifier == "" || idUnsafe.MatchString(string(p.PackageSPDXIdentifier)) {
			bad("package id SPDXRef-%s is not SPDXRef-[A-Za-z0-9.-]+", p.PackageSPDXIdentifier)
		}
		if _, dup := ids[p.PackageSPDXIdentifier]; dup {
			bad("id %s used twice", p.PackageSPDXIdentifier)
		}
		ids[p.PackageSPDXIdentifier] = p.PackageName + "@" + p.PackageVersion
		byName[p.PackageName+"@"+p.PackageVersion] = p
	}
	for _, f := range doc.Files {
		if _, dup := ids[f.FileSPDXIdentifier]; dup {
			bad("id %s used twice", f.FileSPDXIdentifier)
		}
		ids[f.FileSPDXIdentifier] = f.FileName
		hasSHA1 := false
		for _, c := range f.Checksums {
			hasSHA1 = hasSHA1 || c.Algorithm == common.SHA1
		}
		if !hasSHA1 || f.FileName == "" {
			bad("file %s lacks a name or its SHA1 checksum", f.FileSPDXIdentifier)
		}
	}
	described := false
	apps := map[common.ElementID]bool{}
	for _, p := range doc.Packages {
		apps[p.PackageSPDXIdentifier] = p.PrimaryPackagePurpose == "APPLICATION"
	}
	patched := map[string]bool{}
	for _, r := range doc.Relationships {
		switch r.Relationship {
		case common.TypeRelationshipDescribe:
			described = described || (r.RefA.ElementRefID == "DOCUMENT" && apps[r.RefB.ElementRefID])
		case common.TypeRelationshipPatchApplied:
			patched[ids[r.RefB.ElementRefID]] = true
		}
	}
	if !described {
		bad("the document does not DESCRIBE an application package (the binary)")
	}
	for _, m := range want {
		if byName[m.ID()] == nil {
			bad("module %s is compiled in but not listed", m.ID())
		}
	}
	if n := len(doc.Packages) - 3; n != len(want) && want != nil {
		bad("%d module packages listed, %d compiled in", n, len(want))
	}
	var patchedList []string
	for id := range patched {
		patchedList = append(patchedList, id)
	}
	sort.Strings(patchedList)
	for _, w := range wantPatched {
		found := false
		for _, p := range patchedList {
			found = found || p == w || strings.HasPrefix(p, w+"@")
		}
		if !found {
			bad("module %s is patched but no patch is PATCH_APPLIED to it", w)
		}
	}
	if n := len(problems); n > 0 {
		if n > 20 {
			problems = append(problems[:20], fmt.Sprintf("... and %d more", n-20))
		}
		return nil, fmt.Errorf("SPDX document invalid:\n  %s", strings.Join(problems, "\n  "))
	}
	return &Summary{Packages: len(doc.Packages), Files: len(doc.Files), Patched: patchedList}, nil
}

// PatchedModules lists the modules (IDs as ModuleOf returns them) the
// patches change, sorted; the kubernetes module is KubernetesModule.
func PatchedModules(patches []quilt.Patch, mods []Module, tree string) []string {
	set := map[string]bool{}
	for _, p := range patches {
		for _, path := range p.Paths {
			if m := ModuleOf(path, mods, tree); m != "" {
				set[m] = true
			}
		}
	}
	return sortedKeys(set)
}
