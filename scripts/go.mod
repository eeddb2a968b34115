module kubelet-toolchain/scripts

go 1.26.0

require (
	github.com/go-logr/logr v1.4.1
	github.com/spdx/tools-golang v0.5.7
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	golang.org/x/mod v0.42.0
	golang.org/x/sync v0.24.0
	k8s.io/klog/v2 v2.140.0
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/anchore/go-struct-converter v0.1.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
)

require kubelet-toolchain/tools v0.0.0

replace kubelet-toolchain/tools => ../tools
