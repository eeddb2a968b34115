// Command conformance runs upstream's node conformance suite
// (e2e_node.test of the suite release) against one kubelet, started by
// the e2e framework on the e2e's own engine, and writes the suite's JUnit
// report and summary.json under _output/conformance/<kubelet>/<variant>/.
// With --compare it judges both variants under the same seed, retries the
// specs whose results differ, and writes _output/conformance/<kubelet>/compare.json.
//
//	conformance --suite 1.9.11 [--kubelet 1.9.11] [--variant patched]
//	    [--kubelet-binary path] [--focus re] [--skip re] [--seed n] [--compare]
//
// make conformance and make conformance-compare are the front; they build
// the suite and the kubelets and start the engine first.
package main

import (
	"context"
	"encoding/json"
	"errors"
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
	"kubelet-toolchain/tools/kubeconfig"
)

// The suite's API server (k19-conformance 0002).
const apiServer = "http://127.0.0.1:28080"

const defaultFocus = `\[Conformance\]`

type options struct {
	suite, kubelet, variant, binary, focus, skip string
	seed                                         int64
	compare, rejudge                             bool
}

func main() {
	var o options
	flag.StringVar(&o.suite, "suite", "1.9.11", "release whose e2e_node.test judges")
	flag.StringVar(&o.kubelet, "kubelet", "", "release of the kubelet judged (default: the suite's)")
	flag.StringVar(&o.variant, "variant", "patched", "patched or vanilla")
	flag.StringVar(&o.binary, "kubelet-binary", "", "judge this kubelet binary instead of the built one (a packager's rebuild; with --compare, in place of patched)")
	flag.StringVar(&o.focus, "focus", defaultFocus, "ginkgo focus")
	flag.StringVar(&o.skip, "skip", "", "ginkgo skip")
	flag.Int64Var(&o.seed, "seed", 1, "ginkgo random seed (the same for both variants of a comparison)")
	flag.BoolVar(&o.compare, "compare", false, "judge both variants and compare them")
	flag.BoolVar(&o.rejudge, "rejudge", false, "with --compare: judge the last comparison's reports again (after an edit under expected/), running nothing")
	flag.Parse()
	if o.kubelet == "" {
		o.kubelet = o.suite
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := newHarness(ctx, o)
	if err == nil {
		if o.compare {
			err = h.compare(ctx)
		} else {
			err = h.single(ctx)
		}
	}
	var failed errFailed
	switch {
	case errors.As(err, &failed):
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
}

// errFailed is a judgement against the kubelet (exit 1), not a harness
// error (exit 2).
type errFailed string

func (e errFailed) Error() string { return string(e) }

// harness is what every run of a comparison shares: the suite binary,
// the engine with the specs' images, what is expected here, and the
// specs selected.
type harness struct {
	options
	root, suitePath, engine, out string
	expected                     *conformance.Expected
	// last is the comparison judged again with --rejudge.
	last *conformance.Comparison
	// skipAll is the user's skip plus the not-judged specs; selected
	// counts the not-judged ones (as skipped), not the user's skips.
	skipAll  string
	selected func(string) bool
}

func newHarness(ctx context.Context, o options) (*harness, error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return nil, err
	}
	h := &harness{options: o, root: root, engine: framework.EngineSocket(root),
		suitePath: filepath.Join(root, "_output", o.suite, "conformance", "bin", "e2e_node.test"),
		out:       filepath.Join(root, "_output", "conformance", o.kubelet)}
	if _, err := os.Stat(h.suitePath); err != nil {
		return nil, fmt.Errorf("%s is not built (make conformance-suite VERSION=%s): %w", h.suitePath, o.suite, err)
	}
	if o.rejudge {
		if err := h.loadLast(); err != nil {
			return nil, err
		}
	}
	if h.expected, err = conformance.LoadExpected(filepath.Join(root, "e2e", "conformance", "expected"), o.suite, o.kubelet); err != nil {
		return nil, err
	}
	focus, err := regexp.Compile(h.focus)
	if err != nil {
		return nil, fmt.Errorf("focus %q: %w", h.focus, err)
	}
	var skip *regexp.Regexp
	if h.skip != "" {
		if skip, err = regexp.Compile(h.skip); err != nil {
			return nil, fmt.Errorf("skip %q: %w", h.skip, err)
		}
	}
	h.selected = func(name string) bool { return focus.MatchString(name) && (skip == nil || !skip.MatchString(name)) }
	h.skipAll = joinPatterns(h.skip, h.expected.SkipPattern())

	if o.rejudge {
		return h, nil
	}
	gopath := filepath.Join(root, "_output", o.suite, "conformance", "gopath")
	cache := filepath.Join(root, "_output", "cache", "conformance-images")
	if err := conformance.EnsureImages(ctx, docker.Client{Socket: h.engine}, gopath, cache, os.Stderr); err != nil {
		return nil, err
	}
	return h, nil
}

// loadLast reads the comparison to judge again; its reports were run
// with its focus, skip and seed, so those are judged, not the flags'.
func (h *harness) loadLast() error {
	path := filepath.Join(h.out, "compare.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("no comparison to judge again: %w", err)
	}
	h.last = &conformance.Comparison{}
	if err := json.Unmarshal(data, h.last); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if (h.focus != defaultFocus && h.focus != h.last.Focus) || (h.skip != "" && h.skip != h.last.Skip) {
		return fmt.Errorf("%s ran with focus %q and skip %q; judging it again takes those (got focus %q, skip %q)",
			path, h.last.Focus, h.last.Skip, h.focus, h.skip)
	}
	h.focus, h.skip, h.seed = h.last.Focus, h.last.Skip, h.last.Seed
	return nil
}

// single is make conformance: one variant, exit 1 unless every failure
// is a known one.
func (h *harness) single(ctx context.Context) error {
	results, err := h.judge(ctx, h.variant, h.binary, filepath.Join(h.out, h.variant), h.focus)
	if err != nil {
		return err
	}
	sum, err := h.summarize(h.variant, results, filepath.Join(h.out, h.variant))
	if err != nil {
		return err
	}
	if n := sum.Unknown(); n > 0 {
		return errFailed(fmt.Sprintf("%d of %d failures are not known ones", n, len(sum.Failures)))
	}
	return nil
}

// compare is make conformance-compare: both variants under one seed,
// then up to conformance.Retries more runs of the specs whose results
// differ; exit 1 when a spec passed less often on patched.
func (h *harness) compare(ctx context.Context) error {
	start := time.Now()
	var attempts []conformance.Attempt
	judge := h.judge
	if h.rejudge {
		judge = reread
	}
	run := func(focus string, dir func(variant string) string) error {
		var a conformance.Attempt
		for _, v := range conformance.Variants {
			binary := ""
			if v == "patched" {
				binary = h.binary // a packager's rebuild stands for patched
			}
			results, err := judge(ctx, v, binary, dir(v), focus)
			if err != nil {
				return err
			}
			*a.Of(v) = results
		}
		attempts = append(attempts, a)
		return nil
	}
	if err := run(h.focus, func(v string) string { return filepath.Join(h.out, v) }); err != nil {
		return err
	}
	for _, v := range conformance.Variants {
		if _, err := h.summarize(v, *attempts[0].Of(v), filepath.Join(h.out, v)); err != nil {
			return err
		}
	}
	if !h.rejudge {
		if err := os.RemoveAll(filepath.Join(h.out, "retries")); err != nil {
			return err
		}
	}
	if differ := conformance.Differing(attempts[0], h.selected); len(differ) > 0 {
		fmt.Printf("%d specs differ between the variants; running each %d more times on both:\n  %s\n",
			len(differ), conformance.Retries, strings.Join(differ, "\n  "))
		for i := 1; i <= conformance.Retries; i++ {
			if err := run(conformance.SpecsPattern(differ), func(v string) string {
				return filepath.Join(h.out, "retries", fmt.Sprint(i), v)
			}); err != nil {
				return err
			}
		}
	}
	c := conformance.Compare("e2e_node "+h.suite, h.kubelet, h.seed, attempts, h.selected, h.expected)
	c.Focus, c.Skip = h.focus, h.skip
	c.WallTime = time.Since(start).Round(time.Second).String()
	if h.rejudge {
		c.WallTime = h.last.WallTime // of the runs judged, not of reading them
	}
	path := filepath.Join(h.out, "compare.json")
	if err := writeJSON(path, c); err != nil {
		return err
	}
	fmt.Printf("%s, kubelet %s, seed %d, %s: patched %d passed %d failed; vanilla %d passed %d failed (%s)\n",
		c.Suite, c.Kubelet, c.Seed, c.WallTime, c.Patched.Passed, c.Patched.Failed, c.Vanilla.Passed, c.Vanilla.Failed, path)
	for _, r := range c.Retried {
		fmt.Printf("  retried %s: passed %d/%d on patched, %d/%d on vanilla\n", r.Spec, r.PatchedPasses, r.Runs, r.VanillaPasses, r.Runs)
	}
	for _, f := range c.CommonFailures {
		fmt.Printf("  fails on both (known: %v): %s\n", f.KnownFailure, f.Name)
	}
	for _, s := range c.Unexplained {
		fmt.Printf("  UNEXPLAINED (fails on both, in no known-failures file): %s\n", s)
	}
	for _, s := range c.KnownButPassed {
		fmt.Printf("  listed as a known failure but did not fail on both: %s\n", s)
	}
	if len(c.OnlyFailOnPatched) > 0 {
		return errFailed("only fail on patched:\n  " + strings.Join(c.OnlyFailOnPatched, "\n  "))
	}
	return nil
}

// summarize writes a variant's summary.json and prints it.
func (h *harness) summarize(variant string, results []conformance.Result, out string) (*conformance.Summary, error) {
	sum := conformance.Summarize("e2e_node "+h.suite, h.kubelet, variant, results, h.selected)
	conformance.MarkKnown(sum, h.expected)
	path := filepath.Join(out, "summary.json")
	if err := writeJSON(path, sum); err != nil {
		return nil, err
	}
	fmt.Printf("%s: kubelet %s %s: %d specs, %d passed, %d failed, %d skipped (%s)\n", sum.Suite, h.kubelet, variant,
		sum.Specs, sum.Passed, sum.Failed, sum.Skipped, path)
	for _, f := range sum.Failures {
		known := ""
		if f.KnownFailure {
			known = " (known)"
		}
		fmt.Printf("  FAIL%s %s\n       %s\n", known, f.Name, strings.SplitN(f.Reason, "\n", 2)[0])
	}
	if stale := h.expected.Stale(results); len(stale) > 0 {
		return sum, fmt.Errorf("%s name specs the suite does not have:\n  %s",
			strings.Join(h.expected.Files, ", "), strings.Join(stale, "\n  "))
	}
	return sum, nil
}

// judge starts the kubelet of one variant (or binary) on a node of its
// own, runs the suite against it with focus, and reads its JUnit report
// from out.
func (h *harness) judge(ctx context.Context, variant, binary, out, focus string) ([]conformance.Result, error) {
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	for _, d := range []string{filepath.Join(out, "run"), filepath.Join(out, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	node, err := framework.NewNode(ctx, h.root, filepath.Join(out, "node"), filepath.Join(out, "logs"))
	if err != nil {
		return nil, err
	}
	defer node.Cleanup(context.WithoutCancel(ctx))
	node.AllowPrivileged = true
	kc, err := kubeconfig.Config{Name: "suite", Server: apiServer}.Marshal() // plain HTTP on loopback: k19-conformance 0002
	if err != nil {
		return nil, err
	}
	kcPath := filepath.Join(out, "kubeconfig")
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		return nil, err
	}
	// The kubelet runs the suite's privileged pods, so it is locked down
	// as the other e2e kubelets are (anonymous requests refused, no
	// read-only port: the framework's flags), and only the suite's API
	// server can authenticate to it (k19-conformance 0009): its proxy
	// carries the suite's exec, logs and configz. With a single client,
	// the kubelet's default authorization (AlwaysAllow) is enough.
	pki, err := framework.WriteKubeletPKI(filepath.Join(out, "pki"), "kube-apiserver-kubelet-client", "localhost", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	// The node is named localhost so that the API server's proxy to it
	// (exec, logs, configz) dials 127.0.0.1, where the kubelet listens.
	args := append([]string{"--kubeconfig=" + kcPath, "--hostname-override=localhost",
		"--volume-stats-agg-period=10s", "--serialize-image-pulls=false", "--docker-disable-shared-pid=false"},
		pki.KubeletArgs()...)
	if framework.Minor(h.kubelet) <= 7 {
		// 1.7 runs standalone, ignoring --kubeconfig, unless told to require it.
		args = append(args, "--require-kubeconfig=true")
	}
	k, err := node.StartWith(h.kubelet, variant, framework.KubeletOptions{Args: args, Binary: binary})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "kubelet %s %s (%s), log %s\n", h.kubelet, variant, k.Config.Binary, k.LogPath)

	specFile := filepath.Join(h.root, "e2e", "conformance", "system-spec.yaml")
	suiteArgs := []string{
		"--conformance=true", "--host=" + apiServer, "--prepull-images=true",
		"--system-spec-file=" + specFile, "--report-dir=" + out, "--report-prefix=" + variant,
		"--apiserver-kubelet-client-certificate=" + pki.ClientCert, "--apiserver-kubelet-client-key=" + pki.ClientKey,
		"--apiserver-kubelet-certificate-authority=" + pki.CA,
		"--ginkgo.focus=" + focus, fmt.Sprintf("--ginkgo.seed=%d", h.seed), "--ginkgo.noColor",
		"--logtostderr", "--v=2",
		// A failed spec's namespace is left (the node and the suite's API
		// server are discarded after the run): a pod the kubelet never
		// admitted (an older kubelet rejects a newer field) can only be
		// deleted by that kubelet, so deleting its namespace would wait
		// the framework's full 10 minutes after every such failure.
		"--delete-namespace-on-failure=false",
	}
	if h.skipAll != "" {
		suiteArgs = append(suiteArgs, "--ginkgo.skip="+h.skipAll)
	}
	logFile, err := os.Create(filepath.Join(out, "suite.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	start := time.Now()
	cmd := exec.CommandContext(ctx, h.suitePath, suiteArgs...)
	cmd.Dir = filepath.Join(out, "run")
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+h.engine)
	cmd.Stdout = io.MultiWriter(logFile, os.Stdout)
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	runErr := cmd.Run()
	fmt.Fprintf(os.Stderr, "suite ran %s (exit %v); kubelet log %s\n", time.Since(start).Round(time.Second), runErr, k.LogPath)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	results, err := conformance.ReadJUnit(out)
	if err != nil {
		return nil, fmt.Errorf("%w (suite: %v; see %s)", err, runErr, logFile.Name())
	}
	// A suite that ran nothing, or failed outside every spec (its
	// BeforeSuite), has judged nothing: that is not a pass.
	n := conformance.Count(results, func(string) bool { return true })
	if n.Passed+n.Failed == 0 {
		return nil, fmt.Errorf("no spec ran (suite: %v); see %s", runErr, logFile.Name())
	}
	if runErr != nil && n.Failed == 0 {
		return nil, fmt.Errorf("the suite failed outside its specs (%v); see %s", runErr, logFile.Name())
	}
	return results, nil
}

// reread reads the report a judge run left in out.
func reread(_ context.Context, _, _, out, _ string) ([]conformance.Result, error) {
	return conformance.ReadJUnit(out)
}

// joinPatterns is the alternation of the non-empty regexps.
func joinPatterns(patterns ...string) string {
	var alts []string
	for _, p := range patterns {
		if p != "" {
			alts = append(alts, "(?:"+p+")")
		}
	}
	return strings.Join(alts, "|")
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
