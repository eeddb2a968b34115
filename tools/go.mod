module kubelet-toolchain/tools

go 1.26.0

require (
	github.com/go-logr/logr v1.4.1
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
