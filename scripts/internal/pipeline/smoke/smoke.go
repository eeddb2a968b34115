// Package smoke proves a built kubelet really starts: `--version` alone
// says nothing about whether cAdvisor was compiled in (without cgo, 1.7
// and 1.9 die later with "cAdvisor is unsupported in this build"). So the
// kubelet is started against a runtime endpoint of our own, a unix socket
// on which nothing answers (Docker's up to 1.23, the CRI endpoint of the
// dockershim it runs on from 1.24), and must get as far as starting
// cAdvisor and dialling that socket.
package smoke

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/mod/semver"

	"kubelet-toolchain/tools/execx"
)

// Report is what a smoke run observed.
type Report struct {
	Version         string
	CAdvisorStarted bool
	DockerDialled   bool
	Log             string
}

// Markers in the kubelet log (the same in 1.7, 1.9 and 1.18).
const (
	cadvisorStarted = "cAdvisor running in container"
	noCAdvisor      = "cAdvisor is unsupported"
)

// Run checks the binary's version against want (semver, build metadata
// included) and that it starts cAdvisor and dials Docker within timeout.
// The kubelet runs through shadow (scripts/node/shadow-sysctls.sh), so
// the kernel settings it writes at start never reach the machine.
func Run(ctx context.Context, binary, want, shadow string, timeout time.Duration) (*Report, error) {
	rep := &Report{}
	out, err := execx.Run(ctx, execx.Cmd{Name: binary, Args: []string{"--version"}, Timeout: timeout})
	if err != nil {
		return rep, err
	}
	rep.Version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Kubernetes "))
	if rep.Version != want {
		return rep, fmt.Errorf("%s --version says %q, want %q", binary, rep.Version, want)
	}
	if !semver.IsValid(rep.Version) || semver.Compare(rep.Version, strings.SplitN(want, "+", 2)[0]) != 0 {
		return rep, fmt.Errorf("version %q does not parse and compare as the upstream release", rep.Version)
	}

	dir, err := os.MkdirTemp("", "kubelet-smoke-")
	if err != nil {
		return rep, err
	}
	root := filepath.Join(dir, "root")
	defer func() {
		// kubelet bind-mounts its root dir; unmount before removing it.
		syscall.Unmount(root, syscall.MNT_DETACH)
		os.RemoveAll(dir)
	}()
	sock := filepath.Join(dir, "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return rep, err
	}
	defer ln.Close()
	dialled := make(chan struct{})
	var once sync.Once
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			once.Do(func() { close(dialled) })
			c.Close() // no Docker here: kubelet gives up and exits
		}
	}()

	runtime := []string{"--docker-endpoint=unix://" + sock, "--docker=unix://" + sock}
	if semver.Compare(semver.MajorMinor(rep.Version), "v1.24") >= 0 {
		// No dockershim inside, nor its flags: the kubelet dials the CRI
		// endpoint its shim would serve.
		runtime = []string{"--container-runtime=remote", "--container-runtime-endpoint=unix://" + sock}
	}
	kubelet, err := execx.Start(ctx, execx.Cmd{Name: shadow, Args: append([]string{
		"exec", filepath.Join(dir, "sysctls"), root, "--", binary,
		"--root-dir=" + root, "--pod-manifest-path=" + filepath.Join(dir, "manifests"),
		"--cgroup-driver=cgroupfs", "--hostname-override=smoke", "--read-only-port=0", "--v=2"}, runtime...), Timeout: timeout})
	if err != nil {
		return rep, err
	}
	select {
	case <-dialled:
		rep.DockerDialled = true
		// Give it a moment to log the failure, then stop it.
		select {
		case <-kubelet.Done():
		case <-time.After(2 * time.Second):
			kubelet.Stop()
		}
	case <-kubelet.Done(): // exited, or stopped at the timeout
	}
	kubelet.Wait() // without Docker it fails; the log says whether it got far enough
	rep.Log = kubelet.Output()
	rep.CAdvisorStarted = strings.Contains(rep.Log, cadvisorStarted)
	switch {
	case strings.Contains(rep.Log, noCAdvisor):
		return rep, fmt.Errorf("kubelet was built without cAdvisor (cgo off?):\n%s", tail(rep.Log, 10))
	case !rep.CAdvisorStarted:
		return rep, fmt.Errorf("kubelet never logged %q:\n%s", cadvisorStarted, tail(rep.Log, 20))
	case !rep.DockerDialled:
		return rep, fmt.Errorf("kubelet never dialled its runtime endpoint within %s:\n%s", timeout, tail(rep.Log, 20))
	}
	return rep, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
