/*
Copyright 2026 The Kubelet Toolchain Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// The dockershim command serves this tree's dockershim over CRI v1alpha2
// on its own, as 1.23's kubelet started it inside itself
// (pkg/kubelet/kubelet_dockershim.go, runDockershim): the same service,
// server and socket, with the flags and defaults the kubelet took for
// them. A kubelet of 1.24 or 1.25 (--container-runtime=remote
// --container-runtime-endpoint=unix:///var/run/dockershim.sock) then finds
// the containers, sandboxes and checkpoints 1.23 left as they were.
package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/component-base/logs"
	"k8s.io/component-base/version"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"

	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cri/streaming"
	"k8s.io/kubernetes/pkg/kubelet/dockershim"
	dockerremote "k8s.io/kubernetes/pkg/kubelet/dockershim/remote"
)

func main() {
	// The kubelet's own defaults: its flags' (endpoint, docker, CNI, pod
	// infra image, root directory, non-masquerade CIDR) and its
	// configuration's (hairpin mode, cgroup driver, timeouts).
	kf := options.NewKubeletFlags()
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		fmt.Fprintf(os.Stderr, "dockershim: %v\n", err)
		os.Exit(1)
	}
	fs := newFlagSet(kf, kc)
	verflag.AddFlags(fs)
	logs.AddFlags(fs)
	if err := fs.Parse(os.Args[1:]); errors.Is(err, pflag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "dockershim: %v\n", err)
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "dockershim: unexpected arguments %q\n", fs.Args())
		os.Exit(2)
	}
	verflag.PrintAndExitIfRequested()
	logs.InitLogs()
	defer logs.FlushLogs()

	if err := run(kf, kc); err != nil {
		klog.ErrorS(err, "dockershim failed")
		logs.FlushLogs()
		os.Exit(1)
	}
}

// newFlagSet registers the kubelet flags runDockershim's settings came
// from, under the kubelet's names, into kf and kc.
func newFlagSet(kf *options.KubeletFlags, kc *kubeletconfig.KubeletConfiguration) *pflag.FlagSet {
	cr := &kf.ContainerRuntimeOptions
	fs := pflag.NewFlagSet("dockershim", pflag.ContinueOnError)
	fs.StringVar(&kf.RemoteRuntimeEndpoint, "container-runtime-endpoint", kf.RemoteRuntimeEndpoint, "Where the shim serves CRI: the kubelet's --container-runtime-endpoint.")
	fs.StringVar(&cr.RuntimeCgroups, "runtime-cgroups", cr.RuntimeCgroups, "Optional absolute name of cgroups to create and run the runtime in.")
	fs.StringVar(&cr.DockershimRootDirectory, "experimental-dockershim-root-directory", cr.DockershimRootDirectory, "Path to the dockershim root directory (its sandbox checkpoints).")
	fs.StringVar(&cr.PodSandboxImage, "pod-infra-container-image", cr.PodSandboxImage, "The image whose network/ipc namespaces the containers of each pod use.")
	fs.StringVar(&cr.DockerEndpoint, "docker-endpoint", cr.DockerEndpoint, "The docker endpoint to communicate with.")
	fs.DurationVar(&cr.ImagePullProgressDeadline.Duration, "image-pull-progress-deadline", cr.ImagePullProgressDeadline.Duration, "If no pulling progress is made before this deadline, the image pulling is cancelled.")
	fs.StringVar(&cr.NetworkPluginName, "network-plugin", cr.NetworkPluginName, "The network plugin for the pods' sandboxes (cni, kubenet, or none): the one the kubelet had.")
	fs.StringVar(&cr.CNIConfDir, "cni-conf-dir", cr.CNIConfDir, "The full path of the directory in which to search for CNI config files.")
	fs.StringVar(&cr.CNIBinDir, "cni-bin-dir", cr.CNIBinDir, "A comma-separated list of full paths of directories in which to search for CNI plugin binaries.")
	fs.StringVar(&cr.CNICacheDir, "cni-cache-dir", cr.CNICacheDir, "The full path of the directory in which CNI should store cache files.")
	fs.Int32Var(&cr.NetworkPluginMTU, "network-plugin-mtu", cr.NetworkPluginMTU, "The MTU to be passed to the network plugin, to override the default. Set to 0 to use the default 1460 MTU.")
	fs.StringVar(&kf.NonMasqueradeCIDR, "non-masquerade-cidr", kf.NonMasqueradeCIDR, "Traffic to IPs outside this range will use IP masquerade (kubenet).")
	fs.StringVar(&kc.HairpinMode, "hairpin-mode", kc.HairpinMode, `How to set up hairpin NAT: "promiscuous-bridge", "hairpin-veth" or "none".`)
	fs.StringVar(&kc.CgroupDriver, "cgroup-driver", kc.CgroupDriver, "The cgroup driver of docker and the kubelet: 'cgroupfs' or 'systemd'.")
	fs.DurationVar(&kc.RuntimeRequestTimeout.Duration, "runtime-request-timeout", kc.RuntimeRequestTimeout.Duration, "Timeout of docker requests except long running ones (pull, logs, exec, attach).")
	fs.DurationVar(&kc.StreamingConnectionIdleTimeout.Duration, "streaming-connection-idle-timeout", kc.StreamingConnectionIdleTimeout.Duration, "Maximum time a streaming connection (exec, attach, port-forward) can be idle before it is closed. 0 indicates no timeout.")
	return fs
}

func run(kf *options.KubeletFlags, kc *kubeletconfig.KubeletConfiguration) error {
	switch kc.CgroupDriver {
	case "cgroupfs", "systemd":
	default:
		return fmt.Errorf("--cgroup-driver=%q: want cgroupfs or systemd", kc.CgroupDriver)
	}
	switch kubeletconfig.HairpinMode(kc.HairpinMode) {
	case kubeletconfig.PromiscuousBridge, kubeletconfig.HairpinVeth, kubeletconfig.HairpinNone:
	default:
		return fmt.Errorf("--hairpin-mode=%q: want promiscuous-bridge, hairpin-veth or none", kc.HairpinMode)
	}
	cr := &kf.ContainerRuntimeOptions
	klog.InfoS("Starting dockershim", "version", version.Get().GitVersion, "endpoint", kf.RemoteRuntimeEndpoint,
		"dockerEndpoint", cr.DockerEndpoint, "networkPlugin", cr.NetworkPluginName, "cgroupDriver", kc.CgroupDriver,
		"podInfraContainerImage", cr.PodSandboxImage, "rootDirectory", cr.DockershimRootDirectory)

	// As runDockershim builds them.
	pluginSettings := dockershim.NetworkPluginSettings{
		HairpinMode:        kubeletconfig.HairpinMode(kc.HairpinMode),
		NonMasqueradeCIDR:  kf.NonMasqueradeCIDR,
		PluginName:         cr.NetworkPluginName,
		PluginConfDir:      cr.CNIConfDir,
		PluginBinDirString: cr.CNIBinDir,
		PluginCacheDir:     cr.CNICacheDir,
		MTU:                int(cr.NetworkPluginMTU),
	}
	// getStreamingConfig (pkg/kubelet/kubelet.go): the kubelet proxies
	// exec, attach and port-forward to this loopback server.
	streamingConfig := &streaming.Config{
		Addr:                            net.JoinHostPort("localhost", "0"),
		StreamIdleTimeout:               kc.StreamingConnectionIdleTimeout.Duration,
		StreamCreationTimeout:           streaming.DefaultConfig.StreamCreationTimeout,
		SupportedRemoteCommandProtocols: streaming.DefaultConfig.SupportedRemoteCommandProtocols,
		SupportedPortForwardProtocols:   streaming.DefaultConfig.SupportedPortForwardProtocols,
	}
	clientConfig := &dockershim.ClientConfig{
		DockerEndpoint:            cr.DockerEndpoint,
		RuntimeRequestTimeout:     kc.RuntimeRequestTimeout.Duration,
		ImagePullProgressDeadline: cr.ImagePullProgressDeadline.Duration,
	}
	ds, err := dockershim.NewDockerService(clientConfig, cr.PodSandboxImage, streamingConfig,
		&pluginSettings, cr.RuntimeCgroups, kc.CgroupDriver, cr.DockershimRootDirectory)
	if err != nil {
		return err
	}
	// 1.23's kubelet read the logs of a container whose docker logging
	// driver writes no file through docker itself (its legacy service); a
	// CRI kubelet reads only the files, so say so where it matters.
	if supported, err := ds.IsCRISupportedLogDriver(); err != nil {
		return err
	} else if !supported {
		klog.InfoS("Docker's logging driver is not json-file: kubelet 1.24 and later cannot read container logs through the shim (1.23's kubelet read them from docker)")
	}
	server := dockerremote.NewDockerServer(kf.RemoteRuntimeEndpoint, ds)
	if err := server.Start(); err != nil {
		return err
	}
	klog.InfoS("Serving CRI v1alpha2", "endpoint", kf.RemoteRuntimeEndpoint)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	s := <-stop
	// The containers are docker's: stopping the shim stops none of them.
	klog.InfoS("Stopping dockershim", "signal", s.String())
	return nil
}
