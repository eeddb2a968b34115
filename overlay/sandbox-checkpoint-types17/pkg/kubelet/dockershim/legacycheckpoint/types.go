// Package dockershim (imported as legacycheckpoint) holds 1.7's dockershim
// sandbox checkpoint types, copied from 1.7's
// pkg/kubelet/dockershim/docker_checkpoint.go. The checkpoint's checksum
// is fnv32a over a go-spew dump of the checkpoint, which prints type and
// package names ("dockershim.PodSandboxCheckpoint"), so the package name,
// type names and field order must stay exactly 1.7's. 1.8 added
// CheckpointData.HostNetwork (1.9 has the same type); 1.7's does not have
// it. Shared by the fixes of 1.8.15 .. 1.12.10 (overlay
// sandbox-checkpoint-types17).
package dockershim

type Protocol string

type PortMapping struct {
	Protocol      *Protocol `json:"protocol,omitempty"`
	ContainerPort *int32    `json:"container_port,omitempty"`
	HostPort      *int32    `json:"host_port,omitempty"`
}

type CheckpointData struct {
	PortMappings []*PortMapping `json:"port_mappings,omitempty"`
}

type PodSandboxCheckpoint struct {
	Version   string          `json:"version"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Data      *CheckpointData `json:"data,omitempty"`
	CheckSum  uint64          `json:"checksum"`
}
