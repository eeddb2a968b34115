package dist

import (
	"fmt"
	"strings"

	"kubelet-toolchain/scripts/internal/build"
	"kubelet-toolchain/scripts/internal/matrix"
	"kubelet-toolchain/tools/execx"
)

// The source tarball's top directory is a GOPATH: the tree is at
// src/k8s.io/kubernetes under it, as it was built, so both eras build from
// it unchanged (GOPATH mode needs that layout; module mode does not mind).
const treeInSource = "src/k8s.io/kubernetes"

// gopathMarker stands for the GOPATH in the compile command until it is
// rendered as "$PWD" (the top directory of the extracted tarball).
const gopathMarker = "/__GOPATH__"

// BuildCommand is the one-line shell command that rebuilds the kubelet
// from the top directory of the extracted source tarball, writing ./kubelet:
// the same go build arguments and environment the toolchain used, so it
// reproduces the binary's sha256 with the pinned Go toolchain.
func BuildCommand(r *matrix.Release, v matrix.Variant) string {
	p := build.Paths{GOPATH: gopathMarker, Tree: gopathMarker + "/" + treeInSource}
	args, env := build.CompileCommand(r, v, p)
	out := "kubelet"
	var b []string
	if r.Era == matrix.EraModules {
		// Module mode builds from the tree; the output goes back to the top.
		// $OLDPWD (which cd sets), not ../../..: the tree may be a symlink
		// (the RPM and Debian builds link it into a GOPATH), and the go
		// command resolves a relative -o from the physical directory.
		b = append(b, "cd", treeInSource, "&&")
		out = `"$OLDPWD/kubelet"`
	}
	b = append(b, "env")
	for _, e := range env {
		k, val, _ := strings.Cut(e, "=")
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
	b = append(b, "-o", out, build.KubeletPackage(r))
	return strings.Join(b, " ")
}

// buildScript is build.sh at the top of the source tarball.
func buildScript(r *matrix.Release, v matrix.Variant) string {
	return fmt.Sprintf(`#!/bin/sh
# Rebuilds kubelet %s from this tree into ./kubelet; with Go %s
# (GOTOOLCHAIN fetches it) its sha256 is the released binary's. See BUILD.md.
set -e
cd "$(dirname "$0")"
%s
`, r.GitVersion(v), r.Go, BuildCommand(r, v))
}

// buildDoc is BUILD.md at the top of the source tarball.
func buildDoc(r *matrix.Release, v matrix.Variant, version, sum string, series []string) string {
	mode := "GOPATH mode: this directory is the GOPATH, the tree is `" + treeInSource + "`, and cgo is "
	if r.Era == matrix.EraModules {
		mode = "module mode with `-mod=vendor`, from `" + treeInSource + "`; cgo is "
	}
	if r.CGO {
		mode += "on (gcc and the libc headers are needed)"
	} else {
		mode += "off"
	}
	return fmt.Sprintf("# kubelet %s: patched source\n\n"+
		"This is the Kubernetes %s tree exactly as the toolchain built it: the\n"+
		"upstream module zip (%s), its dependencies restored into `vendor/`\n"+
		"from the release's lock, and the series %s applied. Nothing else is\n"+
		"needed to build it.\n\n"+
		"## Build\n\n"+
		"From this directory, one line:\n\n"+
		"```sh\n%s\n```\n\n"+
		"(`./build.sh` runs the same line.) It writes `./kubelet`; with Go %s,\n"+
		"which `GOTOOLCHAIN` selects (a newer local Go fetches it on first use),\n"+
		"its sha256 is the released binary's:\n\n"+
		"```\n%s  kubelet\n```\n\n"+
		"The build is %s. It is reproducible: `-trimpath`, an empty build id,\n"+
		"and the version stamped with the release's own commit and build date\n"+
		"(`kubelet --version` prints `Kubernetes %s`). To build with your own\n"+
		"toolchain set `GOTOOLCHAIN=local` in the line above: the binary then\n"+
		"works the same but its sha256 is that toolchain's.\n",
		version, r.ModuleVersion(), r.ModuleSum, orNone(series), BuildCommand(r, v), r.Go, sum, mode, r.GitVersion(v))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
