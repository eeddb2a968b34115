// Package dockershim (imported as checkpoint114) holds the sandbox
// checkpoint data types of 1.14's to 1.18's dockershim (they agree),
// copied from 1.14's pkg/kubelet/dockershim/docker_checkpoint.go, under
// their package and type names as go-spew prints them: PortMapping with
// the HostIP 1.14 added.
package dockershim

type Protocol string

type PortMapping struct {
	Protocol      *Protocol `json:"protocol,omitempty"`
	ContainerPort *int32    `json:"container_port,omitempty"`
	HostPort      *int32    `json:"host_port,omitempty"`
	HostIP        string    `json:"host_ip,omitempty"`
}

type CheckpointData struct {
	PortMappings []*PortMapping `json:"port_mappings,omitempty"`
	HostNetwork  bool           `json:"host_network,omitempty"`
}
