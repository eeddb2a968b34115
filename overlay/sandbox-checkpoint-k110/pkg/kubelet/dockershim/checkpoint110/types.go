// Package dockershim (imported as checkpoint110) holds the sandbox
// checkpoint types of 1.8's to 1.10's dockershim, copied from 1.10's
// pkg/kubelet/dockershim/docker_checkpoint.go. Their checksum is fnv32a
// over a go-spew dump of the whole checkpoint (CheckSum zeroed), which
// prints package and type names ("dockershim.PodSandboxCheckpoint"), so
// the package name, type names and field order must stay exactly 1.10's.
// 1.11's checkpoint manager checksums the data alone, a CheckpointData
// printed as this one is (1.11..1.13 did not change it).
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

type PodSandboxCheckpoint struct {
	Version   string          `json:"version"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Data      *CheckpointData `json:"data,omitempty"`
	CheckSum  uint64          `json:"checksum"`
}
