package deb

import (
	"context"
	"fmt"
	"io"
	"strings"

	"kubelet-toolchain/scripts/internal/base/dockershim"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/scratchroot"
)

// ShimPackage is the second binary package of a release that serves its
// dockershim on its own (1.23.17, for the kubelets of 1.24 and 1.25).
const ShimPackage = "dockershim"

// The shim's installed paths: the unit reads the flags file toolchain
// switch-node writes.
const (
	ShimBinPath     = "usr/bin/dockershim"
	ShimUnitPath    = "lib/systemd/system/" + dockershim.UnitName
	ShimDefaultPath = "etc/default/dockershim"
)

// ShimFileName is the shim's .deb.
func ShimFileName(version string) string {
	return fmt.Sprintf("%s_%s_amd64.deb", ShimPackage, version)
}

// ShimRelations are the shim's relationship fields besides Depends (the
// .deb's and the Debian source's).
var ShimRelations = [][2]string{
	{"Suggests", "docker.io | docker-ce"},
}

// ShimDepends is the shim's Depends: libc6 as the binary needs, iptables
// (dockershim's hostport and kubenet rules).
func ShimDepends(binary string) (string, error) {
	deps, err := libcDepends(binary)
	if err != nil {
		return "", err
	}
	return strings.Join(append(deps, "iptables"), ", "), nil
}

// BuildShim writes the shim's .deb: the binary, the unit, an empty flags
// file (a conffile: switch-node fills it, dpkg keeps it), the copyright.
func BuildShim(ctx context.Context, o Options) error {
	depends, err := ShimDepends(o.Binary)
	if err != nil {
		return err
	}
	r := o.Release
	c := contents{
		files: map[string]file{
			ShimBinPath:     {src: o.Binary, mode: 0o755},
			ShimUnitPath:    {data: []byte(dockershim.Unit("/" + ShimDefaultPath)), mode: 0o644},
			ShimDefaultPath: {data: dockershim.FlagsFileData(""), mode: 0o644},
			"usr/share/doc/" + ShimPackage + "/copyright": {data: []byte(copyrightFile(r)), mode: 0o644},
		},
		conffiles: []string{"/" + ShimDefaultPath},
		scripts:   ShimScripts(r, o.Variant),
	}
	return build(ctx, o, c, func(sizeKiB int64) string {
		return control(ShimPackage, o.Version, depends, sizeKiB, ShimRelations, ShimDescription(r, o.Variant, o.SHA256))
	})
}

// ShimDescription is the shim package's Description.
func ShimDescription(r *matrix.Release, v matrix.Variant, sha256 string) string {
	return fmt.Sprintf("dockershim of Kubernetes %s (%s), served on its own\n", r.ModuleVersion(), v) + wrap(fmt.Sprintf(
		"The dockershim the kubelet of Kubernetes %s served inside itself, built from the same tree as its kubelet (`dockershim --version`: Kubernetes %s) and served on its own at %s, so the kubelets of 1.24 and 1.25, which no longer carry one, run on the Docker Engine with the containers, sandboxes and checkpoints 1.23 made.",
		r.ModuleVersion(), r.GitVersion(v), dockershim.Endpoint)) + " .\n" + wrap(fmt.Sprintf(
		"Binary sha256: %s. Installing it starts nothing: on a node whose kubelet 1.23 still serves its own dockershim on that socket the two must not run together. `toolchain switch-node` writes its flags (/%s) and the kubelet drop-in that starts it with the kubelet; an upgrade restarts a running shim.", sha256, ShimDefaultPath))
}

// ShimScripts are the shim's maintainer scripts: no enable and no start
// on install (the kubelet's drop-in starts it), a restart of a running
// shim on upgrade (the kubelet reconnects; its containers are the
// engine's), a stop on removal.
func ShimScripts(r *matrix.Release, v matrix.Variant) map[string]string {
	head := fmt.Sprintf("#!/bin/sh\n# dockershim %s: installing it starts nothing (docs/packaging.md).\nset -e\n", r.GitVersion(v))
	return map[string]string{
		"postinst": head + `case "$1" in
configure)
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		# An upgrade: the new binary takes over from a running shim.
		if [ -n "$2" ]; then
			systemctl try-restart ` + dockershim.UnitName + ` >/dev/null || true
		fi
	fi
	;;
esac
exit 0
`,
		"prerm": head + `if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	systemctl stop ` + dockershim.UnitName + ` >/dev/null || true
fi
exit 0
`,
		"postrm": head + `if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
exit 0
`,
	}
}

// CheckShim checks the shim's .deb as Check the kubelet's: control fields,
// file list, an install into a throwaway root that neither enables nor
// starts it, and the installed dockershim --version.
func CheckShim(ctx context.Context, debPath, wantVersion, wantShim, glibcFloor, tmpParent string, log io.Writer) (string, error) {
	return check(ctx, checkSpec{pkg: ShimPackage, bin: ShimBinPath, unit: ShimUnitPath, installed: func(root string, _ []byte) error {
		calls, _ := scratchroot.Calls(root)
		if st := scratchroot.UnitState(root, dockershim.UnitName); st != "" {
			return fmt.Errorf("installing %s left %s %q: it must start nothing; the calls:\n%s", ShimPackage, dockershim.UnitName, st, strings.Join(calls, "\n"))
		}
		for _, c := range calls {
			if strings.Contains(c, " enable") {
				return fmt.Errorf("installing %s enabled a unit: %s", ShimPackage, c)
			}
		}
		return nil
	}}, debPath, wantVersion, wantShim, glibcFloor, tmpParent, log)
}
