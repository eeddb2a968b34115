// Command conformance runs upstream's node conformance suite
// (e2e_node.test of the suite release) against one kubelet, started by
// the e2e framework on the e2e's own engine, and writes the suite's JUnit
// report and summary.json under _output/conformance/<kubelet>/<variant>/.
//
//	go run ./cmd/conformance --suite 1.9.11 [--kubelet 1.9.11] [--variant patched]
//	    [--kubelet-binary path] [--focus re] [--skip re] [--seed n]
//
// make conformance is the front; it builds the suite and the kubelet and
// starts the engine first.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"kubelet-toolchain/e2e/conformance"
	"kubelet-toolchain/e2e/framework"
	"kubelet-toolchain/tools/docker"
)

// The suite's API server (k19-conformance 0002).
const apiServer = "http://127.0.0.1:28080"

type options struct {
	suite, kubelet, variant, binary, focus, skip string
	seed                                         int64
}

func main() {
	var o options
	flag.StringVar(&o.suite, "suite", "1.9.11", "release whose e2e_node.test judges")
	flag.StringVar(&o.kubelet, "kubelet", "", "release of the kubelet judged (default: the suite's)")
	flag.StringVar(&o.variant, "variant", "patched", "patched or vanilla")
	flag.StringVar(&o.binary, "kubelet-binary", "", "judge this kubelet binary instead of the built one (a packager's rebuild)")
	flag.StringVar(&o.focus, "focus", `\[Conformance\]`, "ginkgo focus")
	flag.StringVar(&o.skip, "skip", "", "ginkgo skip")
	flag.Int64Var(&o.seed, "seed", 1, "ginkgo random seed (the same for both variants of a comparison)")
	flag.Parse()
	if o.kubelet == "" {
		o.kubelet = o.suite
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	if len(sum.Failures) > 0 {
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) (*conformance.Summary, error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return nil, err
	}
	suite := filepath.Join(root, "_output", o.suite, "conformance", "bin", "e2e_node.test")
	if _, err := os.Stat(suite); err != nil {
		return nil, fmt.Errorf("%s is not built (make conformance-suite VERSION=%s): %w", suite, o.suite, err)
	}
	out := filepath.Join(root, "_output", "conformance", o.kubelet, o.variant)
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	for _, d := range []string{filepath.Join(out, "run"), filepath.Join(out, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	engine := framework.EngineSocket(root)
	gopath := filepath.Join(root, "_output", o.suite, "conformance", "gopath")
	cache := filepath.Join(root, "_output", "cache", "conformance-images")
	if err := conformance.EnsureImages(ctx, docker.Client{Socket: engine}, gopath, cache, os.Stderr); err != nil {
		return nil, err
	}

	node, err := framework.NewNode(ctx, root, filepath.Join(out, "node"), filepath.Join(out, "logs"))
	if err != nil {
		return nil, err
	}
	defer node.Cleanup(context.WithoutCancel(ctx))
	node.AllowPrivileged = true
	kubeconfig := filepath.Join(out, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(conformance.Kubeconfig(apiServer)), 0o600); err != nil {
		return nil, err
	}
	// The node is named localhost so that the API server's proxy to it
	// (exec, logs, configz) dials 127.0.0.1, where the kubelet listens.
	args := []string{"--kubeconfig=" + kubeconfig, "--hostname-override=localhost",
		"--volume-stats-agg-period=10s", "--serialize-image-pulls=false", "--docker-disable-shared-pid=false"}
	k, err := node.StartWith(o.kubelet, o.variant, framework.KubeletOptions{Args: args, Binary: o.binary})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "kubelet %s %s (%s), log %s\n", o.kubelet, o.variant, k.Config.Binary, k.LogPath)

	specFile := filepath.Join(root, "e2e", "conformance", "system-spec.yaml")
	suiteArgs := []string{
		"--conformance=true", "--host=" + apiServer, "--prepull-images=true",
		"--system-spec-file=" + specFile, "--report-dir=" + out, "--report-prefix=" + o.variant,
		"--ginkgo.focus=" + o.focus, fmt.Sprintf("--ginkgo.seed=%d", o.seed), "--ginkgo.noColor",
		"--logtostderr", "--v=2",
	}
	if o.skip != "" {
		suiteArgs = append(suiteArgs, "--ginkgo.skip="+o.skip)
	}
	logFile, err := os.Create(filepath.Join(out, "suite.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	start := time.Now()
	cmd := exec.CommandContext(ctx, suite, suiteArgs...)
	cmd.Dir = filepath.Join(out, "run")
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+engine)
	cmd.Stdout = io.MultiWriter(logFile, os.Stdout)
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	runErr := cmd.Run()
	fmt.Fprintf(os.Stderr, "suite ran %s (exit %v); kubelet log %s\n", time.Since(start).Round(time.Second), runErr, k.LogPath)

	results, err := conformance.ReadJUnit(out)
	if err != nil {
		return nil, fmt.Errorf("%w (suite: %v; see %s)", err, runErr, logFile.Name())
	}
	focus, err := regexp.Compile(o.focus)
	if err != nil {
		return nil, err
	}
	var skip *regexp.Regexp
	if o.skip != "" {
		if skip, err = regexp.Compile(o.skip); err != nil {
			return nil, err
		}
	}
	sum := conformance.Summarize("e2e_node "+o.suite, o.kubelet, o.variant, results, func(name string) bool {
		return focus.MatchString(name) && (skip == nil || !skip.MatchString(name))
	})
	data, _ := json.MarshalIndent(sum, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "summary.json"), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	fmt.Printf("%s: kubelet %s %s: %d specs, %d passed, %d failed, %d skipped (%s)\n", sum.Suite, o.kubelet, o.variant,
		sum.Specs, sum.Passed, sum.Failed, sum.Skipped, filepath.Join(out, "summary.json"))
	for _, f := range sum.Failures {
		fmt.Printf("  FAIL %s\n       %s\n", f.Name, strings.SplitN(f.Reason, "\n", 2)[0])
	}
	// A suite that ran nothing, or failed outside every spec (its
	// BeforeSuite), has judged nothing: that is not a pass.
	if sum.Specs == 0 || sum.Passed+sum.Failed == 0 {
		return nil, fmt.Errorf("no spec ran (suite: %v); see %s", runErr, logFile.Name())
	}
	if runErr != nil && sum.Failed == 0 {
		return nil, fmt.Errorf("the suite failed outside its specs (%v); see %s", runErr, logFile.Name())
	}
	return sum, nil
}
