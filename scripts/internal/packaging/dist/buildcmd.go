package dist

import (
	"fmt"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/ctoolchain"
	"kubelet-toolchain/tools/execx"
)

// The source tarball's top directory is a GOPATH: the tree is at
// src/k8s.io/kubernetes under it, as it was built, so both eras build from
// it unchanged (GOPATH mode needs that layout; module mode does not mind).
const treeInSource = "src/k8s.io/kubernetes"

// gopathMarker stands for the GOPATH in the compile command until it is
// rendered as "$PWD" (the top directory of the extracted tarball).
const gopathMarker = "/__GOPATH__"

// ctoolchainMarker stands for where C toolchains are kept; the toolchain
// under it is rendered as $CTOOLCHAIN, which the line's wrapper (build.sh,
// the spec's %build) sets to where it unpacked the toolchain.
const ctoolchainMarker = "/__CTOOLCHAIN__"

// CToolchainVar is the shell variable the build line reads the C
// toolchain's directory from.
const CToolchainVar = "CTOOLCHAIN"

// Binaries are the release's binaries as its kubelet target builds them:
// the kubelet, and dockershim where the release serves it on its own.
func Binaries(r *matrix.Release, v matrix.Variant) []build.Output {
	return build.KubeletTarget(build.Options{Release: r, Variant: v, OutputDir: "/"}).Outputs
}

// BuildCommand is the shell command that rebuilds the release's binaries
// from the top directory of the extracted source tarball, writing
// ./kubelet (and ./dockershim): the same go build arguments and
// environment the toolchain used, so it reproduces the binaries' sha256
// with the pinned Go toolchain (and, for a cgo release, the pinned C
// toolchain in $CTOOLCHAIN). Without withCToolchain the line builds cgo
// with the machine's own cc instead: the binaries then need the glibc of
// the machine they were built on. One line per binary, the kubelet's
// last and as it always was; the shim's runs in a subshell (the
// modules-era line changes directory).
func BuildCommand(r *matrix.Release, v matrix.Variant, withCToolchain bool) string {
	var lines []string
	for _, o := range Binaries(r, v) {
		if o.Name == "kubelet" {
			continue
		}
		lines = append(lines, "( "+binaryCommand(r, v, o, withCToolchain)+" )")
	}
	for _, o := range Binaries(r, v) {
		if o.Name == "kubelet" {
			lines = append(lines, binaryCommand(r, v, o, withCToolchain))
		}
	}
	return strings.Join(lines, "\n")
}

func binaryCommand(r *matrix.Release, v matrix.Variant, o build.Output, withCToolchain bool) string {
	p := build.Paths{CToolchain: ctoolchainMarker, GOPATH: gopathMarker, Tree: gopathMarker + "/" + treeInSource}
	args, env := build.CompileCommand(r, v, p)
	cdir := ctoolchain.Dir(ctoolchainMarker, r.CToolchain)
	out := o.Name
	var b []string
	if r.Era == matrix.EraModules {
		// Module mode builds from the tree; the output goes back to the top.
		// $OLDPWD (which cd sets), not ../../..: the tree may be a symlink
		// (the RPM and Debian builds link it into a GOPATH), and the go
		// command resolves a relative -o from the physical directory.
		b = append(b, "cd", treeInSource, "&&")
		out = `"$OLDPWD/` + o.Name + `"`
	}
	b = append(b, "env")
	for _, e := range env {
		k, val, _ := strings.Cut(e, "=")
		if strings.HasPrefix(val, cdir) {
			if withCToolchain {
				b = append(b, k+`="$`+CToolchainVar+strings.TrimPrefix(val, cdir)+`"`)
			}
			continue
		}
		if strings.Contains(val, gopathMarker) {
			b = append(b, k+`="$PWD`+strings.TrimPrefix(val, gopathMarker)+`"`)
			continue
		}
		b = append(b, execx.Quote(k+"="+val))
	}
	b = append(b, "go")
	for _, a := range args {
		b = append(b, execx.Quote(a))
	}
	b = append(b, "-o", out, o.Package)
	return strings.Join(b, " ")
}

// buildScript is build.sh at the top of the source tarball.
func buildScript(r *matrix.Release, v matrix.Variant) string {
	return fmt.Sprintf(`#!/bin/sh
# Rebuilds kubelet %s from this tree into ./kubelet; with Go %s
# (GOTOOLCHAIN fetches it) its sha256 is the released binary's. See BUILD.md.
set -e
cd "$(dirname "$0")"
%s%s
`, r.GitVersion(v), r.Go, unpackCToolchain(r), BuildCommand(r, v, true))
}

// unpackCToolchain is build.sh's part that checks the C toolchain the
// tarball carries against its pinned sha512 and unpacks it once into
// $CTOOLCHAIN ("" for a release built without cgo).
func unpackCToolchain(r *matrix.Release) string {
	if !r.CGO {
		return ""
	}
	c := r.CToolchain
	return strings.NewReplacer("NPM", c.NPM, "FLOOR", c.GlibcFloor, "TGZ", c.Tarball(), "DIR", c.Stem(),
		"SHA512", c.SHA512Hex(), "VAR", CToolchainVar).Replace(`# cgo compiles and links with the pinned C toolchain (NPM: zig,
# glibc FLOOR symbol versions at most), carried as TGZ.
VAR="$PWD/DIR"
if [ ! -x "$VAR/zig" ]; then
  echo "SHA512  TGZ" | sha512sum -c --quiet
  rm -rf "$VAR.tmp" && mkdir "$VAR.tmp"
  tar -xzf TGZ -C "$VAR.tmp" --strip-components=1
  mv "$VAR.tmp" "$VAR"
fi
`)
}

// buildDoc is BUILD.md at the top of the source tarball.
func buildDoc(r *matrix.Release, v matrix.Variant, version, sum, shimSum string, series []string) string {
	lines, writes, sums := "one line", "(`./build.sh` runs the same line.) It writes `./kubelet`", sum+"  kubelet"
	if shimSum != "" {
		lines, writes, sums = "one line per binary", "(`./build.sh` runs the same lines.) They write `./dockershim` and `./kubelet`", shimSum+"  dockershim\n"+sums
	}
	mode := "GOPATH mode: this directory is the GOPATH, the tree is `" + treeInSource + "`, and cgo is "
	if r.Era == matrix.EraModules {
		mode = "module mode with `-mod=vendor`, from `" + treeInSource + "`; cgo is "
	}
	if r.CGO {
		mode += fmt.Sprintf("on, through the C toolchain this tarball carries (`%s`, %s: zig targeting `%s`, unpacked by `./build.sh` into `%s/` and named by `$%s`), so the kubelet needs no glibc symbol version newer than %s on any build machine. With the machine's own cc instead (drop CC, CXX and the ZIG_* variables from the line) the kubelet needs the glibc it was built against and has another sha256",
			r.CToolchain.Tarball(), r.CToolchain.NPM, r.CToolchain.Target(), r.CToolchain.Stem(), CToolchainVar, r.CToolchain.GlibcFloor)
	} else {
		mode += "off"
	}
	if len(r.Tags) > 0 {
		mode += fmt.Sprintf("; built with the tags of the release's official build (`-tags %s`)", strings.Join(r.Tags, ","))
	}
	return fmt.Sprintf("# kubelet %s: patched source\n\n"+
		"This is the Kubernetes %s tree exactly as the toolchain built it: the\n"+
		"upstream module zip (%s), its dependencies restored into `vendor/`\n"+
		"from the release's lock, and the series %s applied. Nothing else is\n"+
		"needed to build it.\n\n"+
		"## Build\n\n"+
		"From this directory (`./build.sh` also unpacks the C toolchain first, when the release has cgo), %s:\n\n"+
		"```sh\n%s\n```\n\n"+
		"%s; with Go %s,\n"+
		"which `GOTOOLCHAIN` selects (a newer local Go fetches it on first use),\n"+
		"its sha256 is the released binary's:\n\n"+
		"```\n%s\n```\n\n"+
		"The build is %s. It is reproducible: `-trimpath`, an empty build id,\n"+
		"and the version stamped with the release's own commit and build date\n"+
		"(`kubelet --version` prints `Kubernetes %s`). To build with your own\n"+
		"toolchain set `GOTOOLCHAIN=local` in the line above: the binary then\n"+
		"works the same but its sha256 is that toolchain's.\n",
		version, r.ModuleVersion(), r.ModuleSum, orNone(series), lines, BuildCommand(r, v, true), writes, r.Go, sums, mode, r.GitVersion(v))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
