// Package scratchroot lays down the least a root directory needs for rpm,
// dnf, dpkg and apt to install a kubelet package into it and run its
// scriptlets there (chrooted, as on a node, never on this machine): a
// shell and the few tools the scriptlets call, from the machine's static
// busybox, and stand-ins of systemd's command-line tools (systemctl,
// deb-systemd-helper, deb-systemd-invoke). No systemd runs in a scratch
// root, so the stand-ins do what those tools do to files (the enable
// links) and record every call, with the unit's resulting state, in a log
// the checks read: which package stopped or started the kubelet, and when.
package scratchroot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"kubelet-toolchain/scripts/internal/base/fsutil"
)

// Log is the stand-ins' record of calls, inside the root.
const Log = "/var/log/systemd-standin.log"

// State is the directory holding each unit's state ("active" or
// "inactive"), one file per unit, inside the root.
const State = "/run/systemd-standin"

// applets are the busybox tools the scriptlets of ours and of the
// official packages call.
var applets = []string{"sh", "ln", "mv", "rm", "cp", "mkdir", "readlink", "cat", "chmod", "touch", "dirname", "basename", "sed", "grep", "true", "false", "test", "["}

// Prepare makes root ready for package installs: /usr/bin holding busybox
// and its applets, /bin and /sbin linking there (as on CentOS 7), /dev/null, the
// systemd stand-ins, and /run/systemd/system, which tells scriptlets the
// node runs systemd.
func Prepare(root string) error {
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("busybox (Debian's busybox-static) is needed for a shell in the scratch roots: %w", err)
	}
	bin := filepath.Join(root, "usr", "bin")
	for _, d := range []string{bin, filepath.Join(root, "usr", "sbin"), filepath.Join(root, "run", "systemd", "system"), filepath.Join(root, State),
		filepath.Join(root, "var", "log"), filepath.Join(root, "etc", "systemd", "system"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// Scriptlets write to /dev/null.
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		return err
	}
	if err := syscall.Mknod(filepath.Join(root, "dev", "null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil && !os.IsExist(err) {
		return fmt.Errorf("making %s/dev/null: %w", root, err)
	}
	if err := os.Chmod(filepath.Join(root, "dev", "null"), 0o666); err != nil {
		return err
	}
	for _, l := range [][2]string{{"bin", "usr/bin"}, {"sbin", "usr/sbin"}} {
		if err := os.Symlink(l[1], filepath.Join(root, l[0])); err != nil && !os.IsExist(err) {
			return err
		}
	}
	if err := fsutil.CopyFile(busybox, filepath.Join(bin, "busybox")); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(bin, "busybox"), 0o755); err != nil {
		return err
	}
	for _, a := range applets {
		if err := os.Symlink("busybox", filepath.Join(bin, a)); err != nil && !os.IsExist(err) {
			return err
		}
	}
	for name, script := range map[string]string{"systemctl": systemctl, "deb-systemd-helper": debSystemdHelper, "deb-systemd-invoke": debSystemdInvoke} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(common+script), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Calls are the stand-ins' log lines in root, oldest first.
func Calls(root string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, Log))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}

// UnitState is what the stand-ins last did to unit: "active",
// "inactive", or "" when nothing started or stopped it.
func UnitState(root, unit string) string {
	data, _ := os.ReadFile(filepath.Join(root, State, unit))
	return strings.TrimSpace(string(data))
}

// SetUnitState records unit as running (a node whose kubelet runs before
// a package is installed) or not.
func SetUnitState(root, unit, state string) error {
	return os.WriteFile(filepath.Join(root, State, unit), []byte(state+"\n"), 0o644)
}

// common is the stand-ins' shared shell: the log line (the package whose
// scriptlet called, from DPKG_MAINTSCRIPT_PACKAGE or rpm's RPM_PACKAGE_NAME
// where set) and the unit file lookup systemd does.
const common = `#!/bin/sh
# A stand-in of one of systemd's tools for a scratch root with no systemd:
# it records the call and does what the tool does to files. Test-only.
log() { echo "${DPKG_MAINTSCRIPT_PACKAGE:-${RPM_PACKAGE_NAME:-?}} ${DPKG_MAINTSCRIPT_NAME:-} $(basename "$0") $*" >> ` + Log + `; }
unitfile() {
	for d in /etc/systemd/system /run/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
		if [ -f "$d/$1" ]; then echo "$d/$1"; return 0; fi
	done
	return 1
}
wants() { echo /etc/systemd/system/multi-user.target.wants/$1; }
setstate() { echo "$2" > ` + State + `/$1; }
log "$@"
`

const systemctl = `
while [ "${1#-}" != "$1" ]; do shift; done
cmd=$1; shift
for u in "$@"; do
	case "$u" in *.service) ;; *) u=$u.service ;; esac
	case "$cmd" in
	start|restart|reload-or-restart) setstate "$u" active ;;
	try-restart) ;; # a running unit stays running, a stopped one stopped
	stop) setstate "$u" inactive ;;
	enable|reenable) f=$(unitfile "$u") || { echo "Failed to enable unit: Unit file $u does not exist." >&2; exit 1; }
		mkdir -p "$(dirname "$(wants "$u")")"; ln -sf "$f" "$(wants "$u")" ;;
	disable) rm -f "$(wants "$u")" ;;
	is-enabled) [ -e "$(wants "$u")" ] && echo enabled && exit 0; echo disabled; exit 1 ;;
	is-active) [ "$(cat ` + State + `/$u 2>/dev/null)" = active ] && echo active && exit 0; echo inactive; exit 3 ;;
	esac
done
exit 0
`

// debSystemdHelper keeps deb-systemd-helper's state the way it does: a
// unit it enabled once is remembered, so a unit the admin disabled stays
// disabled on upgrade (was-enabled), and a new one is enabled.
const debSystemdHelper = `while [ "${1#-}" != "$1" ]; do shift; done
cmd=$1; shift
st=/var/lib/systemd/deb-systemd-helper-enabled
mkdir -p $st
for u in "$@"; do
	case "$cmd" in
	enable) f=$(unitfile "$u") || exit 1
		mkdir -p "$(dirname "$(wants "$u")")"; ln -sf "$f" "$(wants "$u")"; touch "$st/$u.dsh-also" ;;
	was-enabled) if [ -e "$st/$u.dsh-also" ] && [ ! -L "$(wants "$u")" ]; then exit 1; fi ;;
	debian-installed) [ -e "$st/$u.dsh-also" ] || exit 1 ;;
	mask|unmask|update-state) ;;
	purge) rm -f "$st/$u.dsh-also" ;;
	esac
done
exit 0
`

const debSystemdInvoke = `cmd=$1; shift
for u in "$@"; do
	case "$cmd" in
	start|restart) setstate "$u" active ;;
	stop) setstate "$u" inactive ;;
	esac
done
exit 0
`
