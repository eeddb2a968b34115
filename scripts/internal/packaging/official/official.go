// Package official records what the official kubelet packages of the
// dockershim era looked like, from kubernetes/release's rpm/ and debian/
// trees of each date (each patch release was built from the tree on master
// at its release date): where they put the unit and the flags file, what
// kubeadm's drop-in reads, what they required, and their maintainer
// scripts. Our packages follow it (they replace the official ones in
// place), and make check-repo builds stand-ins of the official packages
// from it, installs them as kubeadm left a node, and upgrades from them
// and rolls back to them.
//
// The files under layouts/ are kubernetes/release's (Apache-2.0), copied
// as they were: layouts/1.9 from commit 4de61a4d (2018-10-05, what built
// 1.9.11 of October 2018: rpm/ and debian/xenial/, the 1.8-1.10 kubeadm
// drop-in), layouts/1.13 from commit a49231da (2019-10-11: build/rpms/)
// and tag v0.1.3 (the debs' tree the build guide of the day named:
// debian/bionic/, identical in these files). The debs' maintainer scripts
// are what debhelper made of the trees' postinst and dh_systemd_enable /
// dh_systemd_start at compat 9, rendered from the autoscripts of the
// build images: init-system-helpers 1.22 (golang:1.7, Debian jessie) for
// 1.9, debhelper 12.1.1 (golang:1.12, Debian buster; stretch's 10.2.5
// differs in guards and comments only) for 1.13.
package official

import (
	"embed"
	"fmt"
	"path"
	"time"
)

//go:embed layouts
var layouts embed.FS

// UnitMoved is when kubernetes/release moved the kubelet RPM's unit (and
// kubeadm's drop-in) from /etc/systemd/system to %{_unitdir}
// (/usr/lib/systemd/system), commit 6968f3b9. RPMs built before it have
// the unit in /etc, where `systemctl enable` made its link point.
var UnitMoved = time.Date(2019, 3, 2, 0, 0, 0, 0, time.UTC)

// RPMUnitDir is where the official kubelet RPM of a release released at
// date had its unit.
func RPMUnitDir(date time.Time) string {
	if date.Before(UnitMoved) {
		return "/etc/systemd/system"
	}
	return "/usr/lib/systemd/system"
}

// DropInReadsFlags says whether kubeadm's drop-in of a minor reads the
// flags file (kubernetes#64780, 1.11 on). Before, it sets its variables
// with Environment= and reads no file, and operators set
// KUBELET_EXTRA_ARGS in drop-ins of their own; a unit that read a flags
// file holding the official `KUBELET_EXTRA_ARGS=` would blank theirs
// (EnvironmentFile= overrides Environment=).
func DropInReadsFlags(minor int) bool { return minor >= 11 }

// RPMShipsFlags says whether the official kubelet RPM of a minor shipped
// /etc/sysconfig/kubelet (2241c89a: 1.11 on).
func RPMShipsFlags(minor int) bool { return minor >= 11 }

// DebShipsFlags says whether the official kubelet .deb of a release
// released at date shipped /etc/default/kubelet (a conffile): the .debs
// built from 2241c89a (2018-06-13) until release#672 (2019-02-28).
func DebShipsFlags(date time.Time) bool {
	return !date.Before(time.Date(2018, 6, 13, 0, 0, 0, 0, time.UTC)) && date.Before(time.Date(2019, 2, 28, 0, 0, 0, 0, time.UTC))
}

// DebUnitDir is where every official kubelet .deb had its unit.
const DebUnitDir = "/lib/systemd/system"

// FlagsFile is the flags file as the official packages shipped it
// (/etc/sysconfig/kubelet in the RPMs from 1.11, /etc/default/kubelet in
// the .debs built from June 2018 to March 2019), byte for byte: the
// variable kubeadm's drop-in (1.11 on) ends ExecStart with.
const FlagsFile = "KUBELET_EXTRA_ARGS=\n"

// File is one file of an official package.
type File struct {
	Path string
	// Layout names the file under layouts/<minor>/; Data is used when "".
	Layout string
	Data   string
	Mode   int64
	// Config marks an RPM %config(noreplace) file (a .deb's files under
	// /etc are conffiles anyway).
	Config bool
}

// Package is one official package as a node had it installed.
type Package struct {
	Name string
	// Version is rpm's Version-Release or Debian's version.
	Version  string
	Files    []File
	Dirs     []string
	Requires []string
	// Scripts are a .deb's maintainer scripts by name (postinst, prerm,
	// postrm), as layouts/ file names; the RPMs had none.
	Scripts map[string]string
}

// Node is the official packages of one minor, on CentOS 7 (RPMs) and on
// Ubuntu 16.04 (.debs), as a node had them after `kubeadm join`.
type Node struct {
	// Release is the official kubelet's, e.g. 1.9.11.
	Release string
	// Date is its release date, which picked the tree that built it.
	Date     time.Time
	RPM, Deb []Package
	// KubeadmFlags is what `kubeadm join` wrote to
	// /var/lib/kubelet/kubeadm-flags.env (1.11 on), "" before.
	KubeadmFlags string
	// RPMDropIn and DebDropIn are where kubeadm's drop-in is.
	RPMDropIn, DebDropIn string
	// RPMFlags and DebFlags are the flags files the drop-in reads ("" when
	// it reads none).
	RPMFlags, DebFlags string
}

// Nodes are the official packages make check-repo stands in for.
var Nodes = []Node{node19, node113}

// node19 is a 1.9 node: kubelet 1.9.11 of 2018-10, no flags file in the
// RPM (it came with 1.11), one in the .deb (a conffile), and the 1.8-1.10
// drop-in that carries the flags itself and reads no file.
var node19 = Node{
	Release: "1.9.11", Date: time.Date(2018, 10, 10, 0, 0, 0, 0, time.UTC),
	RPMDropIn: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", DebDropIn: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
	RPM: []Package{
		{Name: "kubelet", Version: "1.9.11-0",
			Files: []File{
				{Path: "/usr/bin/kubelet", Data: standinBinary("kubelet", "1.9.11"), Mode: 0o755},
				{Path: "/etc/systemd/system/kubelet.service", Layout: "rpm/kubelet.service", Mode: 0o644},
			},
			Dirs:     []string{"/etc/kubernetes/manifests"},
			Requires: []string{"iptables >= 1.4.21", "kubernetes-cni = 0.6.0", "socat", "util-linux", "ethtool", "iproute", "ebtables"}},
		{Name: "kubeadm", Version: "1.9.11-0",
			Files: []File{
				{Path: "/usr/bin/kubeadm", Data: standinBinary("kubeadm", "1.9.11"), Mode: 0o755},
				{Path: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", Layout: "rpm/10-kubeadm.conf", Mode: 0o755},
			},
			Requires: []string{"kubelet >= 1.6.0", "kubectl >= 1.6.0", "kubernetes-cni >= 0.6.0", "cri-tools >= 1.11.0"}},
		{Name: "kubectl", Version: "1.9.11-0", Files: []File{{Path: "/usr/bin/kubectl", Data: standinBinary("kubectl", "1.9.11"), Mode: 0o755}}},
		{Name: "cri-tools", Version: "1.11.1-0", Files: []File{{Path: "/usr/bin/crictl", Data: standinBinary("crictl", "1.11.1"), Mode: 0o755}}},
		{Name: "kubernetes-cni", Version: "0.6.0-0", Files: []File{{Path: "/opt/cni/bin/bridge", Data: standinBinary("bridge", "0.6.0"), Mode: 0o755}},
			Requires: []string{"kubelet"}},
	},
	Deb: []Package{
		{Name: "kubelet", Version: "1.9.11-00",
			Files: []File{
				{Path: "/usr/bin/kubelet", Data: standinBinary("kubelet", "1.9.11"), Mode: 0o755},
				{Path: "/lib/systemd/system/kubelet.service", Layout: "deb/kubelet.service", Mode: 0o644},
				{Path: "/etc/default/kubelet", Layout: "deb/kubelet.default", Mode: 0o644},
			},
			Requires: []string{"iptables (>= 1.4.21)", "kubernetes-cni (= 0.6.0)", "iproute2", "socat", "util-linux", "mount", "ebtables", "ethtool", "init-system-helpers (>= 1.18~)"},
			Scripts:  map[string]string{"postinst": "deb/kubelet.postinst", "prerm": "deb/kubelet.prerm", "postrm": "deb/kubelet.postrm"}},
		{Name: "kubeadm", Version: "1.9.11-00",
			Files: []File{
				{Path: "/usr/bin/kubeadm", Data: standinBinary("kubeadm", "1.9.11"), Mode: 0o755},
				{Path: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", Layout: "deb/10-kubeadm.conf", Mode: 0o644},
			},
			Requires: []string{"kubelet (>= 1.6.0)", "kubectl (>= 1.6.0)", "kubernetes-cni (= 0.6.0)"},
			Scripts:  map[string]string{"postinst": "deb/kubeadm.postinst"}},
		{Name: "kubectl", Version: "1.9.11-00", Files: []File{{Path: "/usr/bin/kubectl", Data: standinBinary("kubectl", "1.9.11"), Mode: 0o755}}},
		{Name: "kubernetes-cni", Version: "0.6.0-00", Files: []File{{Path: "/opt/cni/bin/bridge", Data: standinBinary("bridge", "0.6.0"), Mode: 0o755}}},
	},
}

// node113 is a 1.13 node: kubelet 1.13.12 of 2019-10, the RPM's unit and
// drop-in moved to /usr/lib/systemd/system and /etc/sysconfig/kubelet a
// %config(noreplace) file; the .deb without /etc/default/kubelet (since
// March 2019), which the drop-in reads if the operator made it.
var node113 = Node{
	Release: "1.13.12", Date: time.Date(2019, 10, 15, 0, 0, 0, 0, time.UTC),
	KubeadmFlags: "KUBELET_KUBEADM_ARGS=--cgroup-driver=cgroupfs --network-plugin=cni\n",
	RPMDropIn:    "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", DebDropIn: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
	RPMFlags: "/etc/sysconfig/kubelet", DebFlags: "/etc/default/kubelet",
	RPM: []Package{
		{Name: "kubelet", Version: "1.13.12-0",
			Files: []File{
				{Path: "/usr/bin/kubelet", Data: standinBinary("kubelet", "1.13.12"), Mode: 0o755},
				{Path: "/usr/lib/systemd/system/kubelet.service", Layout: "rpm/kubelet.service", Mode: 0o644},
				{Path: "/etc/sysconfig/kubelet", Layout: "rpm/kubelet.sysconfig", Mode: 0o644, Config: true},
			},
			Dirs:     []string{"/etc/kubernetes/manifests"},
			Requires: []string{"iptables >= 1.4.21", "kubernetes-cni >= 0.7.5", "socat", "util-linux", "ethtool", "iproute", "ebtables", "conntrack"}},
		{Name: "kubeadm", Version: "1.13.12-0",
			Files: []File{
				{Path: "/usr/bin/kubeadm", Data: standinBinary("kubeadm", "1.13.12"), Mode: 0o755},
				{Path: "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", Layout: "rpm/10-kubeadm.conf", Mode: 0o644},
			},
			Requires: []string{"kubelet >= 1.13.0", "kubectl >= 1.13.0", "kubernetes-cni >= 0.7.5", "cri-tools >= 1.13.0"}},
		{Name: "kubectl", Version: "1.13.12-0", Files: []File{{Path: "/usr/bin/kubectl", Data: standinBinary("kubectl", "1.13.12"), Mode: 0o755}}},
		{Name: "cri-tools", Version: "1.13.0-0", Files: []File{{Path: "/usr/bin/crictl", Data: standinBinary("crictl", "1.13.0"), Mode: 0o755}}},
		{Name: "kubernetes-cni", Version: "0.7.5-0", Files: []File{{Path: "/opt/cni/bin/bridge", Data: standinBinary("bridge", "0.7.5"), Mode: 0o755}}},
	},
	Deb: []Package{
		{Name: "kubelet", Version: "1.13.12-00",
			Files: []File{
				{Path: "/usr/bin/kubelet", Data: standinBinary("kubelet", "1.13.12"), Mode: 0o755},
				{Path: "/lib/systemd/system/kubelet.service", Layout: "deb/kubelet.service", Mode: 0o644},
			},
			Requires: []string{"iptables (>= 1.4.21)", "kubernetes-cni (>= 0.7.5)", "iproute2", "socat", "util-linux", "mount", "ebtables", "ethtool", "conntrack", "init-system-helpers (>= 1.18~)"},
			Scripts:  map[string]string{"postinst": "deb/kubelet.postinst", "prerm": "deb/kubelet.prerm", "postrm": "deb/kubelet.postrm"}},
		{Name: "kubeadm", Version: "1.13.12-00",
			Files: []File{
				{Path: "/usr/bin/kubeadm", Data: standinBinary("kubeadm", "1.13.12"), Mode: 0o755},
				{Path: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", Layout: "deb/10-kubeadm.conf", Mode: 0o644},
			},
			Requires: []string{"kubelet (>= 1.13.0)", "kubectl (>= 1.13.0)", "kubernetes-cni (>= 0.7.5)", "cri-tools (>= 1.13.0)"},
			Scripts:  map[string]string{"postinst": "deb/kubeadm.postinst"}},
		{Name: "kubectl", Version: "1.13.12-00", Files: []File{{Path: "/usr/bin/kubectl", Data: standinBinary("kubectl", "1.13.12"), Mode: 0o755}}},
		{Name: "cri-tools", Version: "1.13.0-00", Files: []File{{Path: "/usr/bin/crictl", Data: standinBinary("crictl", "1.13.0"), Mode: 0o755}}},
		{Name: "kubernetes-cni", Version: "0.7.5-00", Files: []File{{Path: "/opt/cni/bin/bridge", Data: standinBinary("bridge", "0.7.5"), Mode: 0o755}}},
	},
}

// Minor is the node's minor, as our repositories name theirs (v1.9).
func (n Node) Minor() string {
	v := n.Release
	for i, dots := 0, 0; i < len(v); i++ {
		if v[i] == '.' {
			if dots++; dots == 2 {
				return "v" + v[:i]
			}
		}
	}
	return "v" + v
}

// Content is a file's bytes: its layout file's, or Data.
func (n Node) Content(f File) ([]byte, error) {
	if f.Layout == "" {
		return []byte(f.Data), nil
	}
	return n.Layout(f.Layout)
}

// Layout reads layouts/<minor>/<name>.
func (n Node) Layout(name string) ([]byte, error) {
	data, err := layouts.ReadFile(path.Join("layouts", n.Minor()[1:], name))
	if err != nil {
		return nil, fmt.Errorf("official %s: %w", n.Release, err)
	}
	return data, nil
}

// standinBinary stands in for an official binary: it says which one it is
// and differs from every kubelet we build.
func standinBinary(name, version string) string {
	return fmt.Sprintf("#!/bin/sh\n# Test-only stand-in of the official %s %s binary (make check-repo).\necho \"Kubernetes v%s (official %s stand-in)\"\n", name, version, version, name)
}
