module kubelet-toolchain/tools

go 1.26.0

require github.com/go-logr/logr v1.4.1
