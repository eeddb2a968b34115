module kubelet-toolchain/tools

go 1.26.0
