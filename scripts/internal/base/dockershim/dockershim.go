// Package dockershim is 1.23.17's dockershim served on its own (make
// dockershim) as a node has it: the socket it serves, its binary, systemd
// unit and flags file. The packages that install it (packaging) and the
// switch that configures it (migrate, toolchain switch-node) share them,
// so the unit a package ships and the flags file the switch writes meet.
package dockershim

import (
	"fmt"
	"regexp"
)

// Endpoint is where 1.23's kubelet served its dockershim by default, and
// where the shim serves it for the kubelets after it.
const Endpoint = "unix:///var/run/dockershim.sock"

// On a node.
const (
	Binary = "/usr/bin/dockershim"
	// UnitName is the shim's systemd unit; a kubelet drop-in (switch-node
	// writes it) makes the kubelet want it and start after it.
	UnitName = "dockershim.service"
	// FlagsVar is the variable of the flags file the unit passes on.
	FlagsVar = "DOCKERSHIM_ARGS"
)

// PackagedUnits are where the packages put the unit: the .deb's, then
// the RPM's (the kubelet's unit directories of 1.23's packages).
var PackagedUnits = []string{"/lib/systemd/system/" + UnitName, "/usr/lib/systemd/system/" + UnitName}

// FlagsFile is the shim's flags file beside the kubelet's in dir: Debian's
// /etc/default, RPM's /etc/sysconfig.
func FlagsFile(dir string) string { return dir + "/dockershim" }

// FlagsFileData is the flags file holding args (already joined as one
// shell word list); the packages ship it with none.
func FlagsFileData(args string) []byte {
	return []byte(fmt.Sprintf("# The dockershim's flags: the ones kubelet 1.23 gave its own dockershim\n# (toolchain switch-node writes them).\n%s=%q\n", FlagsVar, args))
}

// Unit is dockershim.service reading flagsFile. It starts nothing by
// itself (the packages do not enable it): the kubelet's drop-in pulls it
// in, so a node whose kubelet 1.23 still serves its own dockershim on the
// same socket never runs both.
func Unit(flagsFile string) string {
	return `[Unit]
Description=dockershim of Kubernetes 1.23.17, served on its own for the kubelet
Documentation=https://kubernetes.io/docs/
After=docker.service
Requires=docker.service
Before=kubelet.service

[Service]
EnvironmentFile=-` + flagsFile + `
ExecStart=` + Binary + ` $` + FlagsVar + `
Restart=always
RestartSec=10

[Install]
WantedBy=multi-user.target
`
}

var envFileRE = regexp.MustCompile(`(?m)^EnvironmentFile=-?(\S+)\s*$`)

// UnitFlagsFile is the flags file a unit reads ("" for none).
func UnitFlagsFile(unit []byte) string {
	if m := envFileRE.FindSubmatch(unit); m != nil {
		return string(m[1])
	}
	return ""
}
