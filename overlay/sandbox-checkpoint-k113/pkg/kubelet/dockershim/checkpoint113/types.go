// Package dockershim (imported as checkpoint113) holds the sandbox
// checkpoint data types of 1.13's dockershim, copied from 1.13's
// pkg/kubelet/dockershim/docker_checkpoint.go. The checkpoint's checksum
// is fnv32a over a go-spew dump of its data, which prints package and
// type names ("dockershim.PortMapping"), so the package name, type names
// and field order must stay exactly 1.13's: PortMapping without the
// HostIP 1.14 added.
package dockershim

type Protocol string

type PortMapping struct {
	Protocol      *Protocol `json:"protocol,omitempty"`
	ContainerPort *int32    `json:"container_port,omitempty"`
	HostPort      *int32    `json:"host_port,omitempty"`
}

type CheckpointData struct {
	PortMappings []*PortMapping `json:"port_mappings,omitempty"`
	HostNetwork  bool           `json:"host_network,omitempty"`
}
