package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
	"kubelet-toolchain/tools/docker"
)

// rehearsalInstance is the machine's rehearsal instance this process's
// rehearsals run as (toolchain rehearsal --instance): the first free one
// of its slot, slot+processes, ..., so rehearsals on parallel processes
// run side by side, never 0, which is make rehearsal's (an operator's
// cluster may be up on it), and never one another checkout holds or left
// up (a CI run failed at once on a cluster an interrupted rehearsal of
// another checkout had left on instance 1). Chosen once per process.
func rehearsalInstance() int {
	GinkgoHelper()
	instanceOnce.Do(func() {
		suite, _ := GinkgoConfiguration()
		cmd := exec.Command(filepath.Join(repoRoot, "_output", "bin", "toolchain"), "--root", repoRoot, "rehearsal", "free-instance",
			"--instance", strconv.Itoa(framework.Slot()), "--stride", strconv.Itoa(max(suite.ParallelTotal, 1)))
		cmd.Stderr = GinkgoWriter
		out, err := cmd.Output()
		if err == nil {
			instance, err = strconv.Atoi(strings.TrimSpace(string(out)))
		}
		instanceErr = err
		fmt.Fprintf(GinkgoWriter, "rehearsal instance %d (%s)\n", instance, rehearsalDirOf(instance))
	})
	Expect(instanceErr).NotTo(HaveOccurred(), "toolchain rehearsal free-instance")
	return instance
}

var (
	instanceOnce sync.Once
	instance     int
	instanceErr  error
)

// rehearsalEtcd is the instance's etcd client and peer address, as
// scripts/internal/cluster/controlplane's PortsFor opens them (docs/rehearsal.md
// lists each socket).
func rehearsalEtcd() (client, peer string) {
	n := rehearsalInstance()
	return fmt.Sprintf("127.0.0.1:%d", 22379+10*n), fmt.Sprintf("127.0.0.1:%d", 22380+10*n)
}

// rehearsalDir is a path under the instance's _output/rehearsal-<n>.
func rehearsalDir(parts ...string) string {
	return filepath.Join(append([]string{rehearsalDirOf(rehearsalInstance())}, parts...)...)
}

func rehearsalDirOf(instance int) string {
	return filepath.Join(repoRoot, "_output", fmt.Sprintf("rehearsal-%d", instance))
}

// rehearsalKubectl runs the kubectl of the rehearsal's control plane cp
// (the target its spec is labelled with) as the rehearsal's admin.
func rehearsalKubectl(ctx context.Context, cp string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "_output", cp, "control-plane", "bin", "kubectl"),
		append([]string{"--kubeconfig", rehearsalDir("kubeconfig")}, args...)...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// certClient presents the pair dir/name.crt/.key (none for "") and trusts
// the rehearsal's CA.
func certClient(name string) *http.Client {
	GinkgoHelper()
	ca, err := os.ReadFile(rehearsalDir("pki", "ca.crt"))
	Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(ca)).To(BeTrue())
	cfg := &tls.Config{RootCAs: pool}
	if name != "" {
		pair, err := tls.LoadX509KeyPair(name+".crt", name+".key")
		Expect(err).NotTo(HaveOccurred())
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// status is the HTTP status c gets for a GET of url.
func status(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// expectClusterLockedDown checks a running rehearsal cluster from outside,
// as a local user or a pod would try it, and that exec and logs still work
// through the API server (its kubelet client, authorized by RBAC). cp is
// the release of the cluster's control plane.
func expectClusterLockedDown(ctx context.Context, cp string) {
	GinkgoHelper()
	server, err := rehearsalKubectl(ctx, cp, "config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")
	Expect(err).NotTo(HaveOccurred(), server)
	out, err := rehearsalKubectl(ctx, cp, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.addresses[?(@.type=="InternalIP")].address} {end}`)
	Expect(err).NotTo(HaveOccurred(), out)
	nodeIP := map[string]string{}
	for _, f := range strings.Fields(out) {
		name, ip, _ := strings.Cut(f, "=")
		nodeIP[name] = ip
	}
	Expect(nodeIP).To(HaveLen(2))

	By("API server: anonymous requests refused")
	code, err := anonymousGet(ctx, server+"/api")
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(http.StatusUnauthorized), "anonymous GET %s/api", server)

	By("controller manager and scheduler: nothing beyond loopback (1.12+ would serve HTTPS on every address at 10257 and 10259)")
	u, err := url.Parse(server)
	Expect(err).NotTo(HaveOccurred())
	for _, port := range []string{"10251", "10252", "10257", "10259"} {
		Expect(addrClosed(net.JoinHostPort(u.Hostname(), port))).To(BeTrue(), "the control plane's host answers on %s:%s", u.Hostname(), port)
	}

	By("kubelets: anonymous refused, no read-only or cAdvisor port, a node's identity not authorized on another node")
	var names []string
	for name := range nodeIP {
		names = append(names, name)
	}
	for i, name := range names {
		ip := nodeIP[name]
		code, err := anonymousGet(ctx, "https://"+ip+":10250/pods")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized), "node %s: anonymous GET :10250/pods", name)
		Expect(addrClosed(ip+":10255")).To(BeTrue(), "node %s: the read-only port answers", name)
		Expect(addrClosed(ip+":4194")).To(BeTrue(), "node %s: cAdvisor's port answers", name)
		// Webhook authorization: another node's kubelet certificate
		// authenticates (CA-signed) but may not read this kubelet's pods.
		other := names[(i+1)%len(names)]
		code, err = status(ctx, certClient(rehearsalDir("nodes", other, "kubelet")), "https://"+ip+":10250/pods")
		Expect(err).NotTo(HaveOccurred(), "node %s: the kubelet's serving certificate, checked against the cluster CA", name)
		Expect(code).To(Equal(http.StatusForbidden), "node %s: GET :10250/pods as system:node:%s", name, other)
	}

	By("etcd: client and peer ports refuse plain HTTP and TLS without a client certificate")
	etcdClient, etcdPeer := rehearsalEtcd()
	for _, addr := range []string{etcdClient, etcdPeer} {
		_, err := status(ctx, http.DefaultClient, "http://"+addr+"/health")
		Expect(err).To(HaveOccurred(), "etcd %s answered plain HTTP", addr)
		_, err = status(ctx, certClient(""), "https://"+addr+"/health")
		Expect(err).To(HaveOccurred(), "etcd %s answered TLS without a client certificate", addr)
	}
	// The same client with the admin's certificate is served: the refusals
	// above are etcd's, not a dead port.
	code, err = status(ctx, certClient(rehearsalDir("pki", "admin")), "https://"+etcdClient+"/health")
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(http.StatusOK))

	By("exec and logs through the API server")
	pod, err := rehearsalKubectl(ctx, cp, "get", "pods", "--all-namespaces", "-o",
		`jsonpath={range .items[?(@.status.phase=="Running")]}{.metadata.namespace}/{.metadata.name}/{.spec.nodeName}/{.spec.containers[0].name}/{.spec.containers[0].image} {end}`)
	Expect(err).NotTo(HaveOccurred(), pod)
	var target []string
	for _, p := range strings.Fields(pod) {
		if f := strings.Split(p, "/"); len(f) >= 5 && strings.HasPrefix(strings.Join(f[4:], "/"), "e2e.local/workload:") {
			target = f
			break
		}
	}
	Expect(target).NotTo(BeEmpty(), "no running pod of e2e.local/workload: %s", pod)
	ns, name, node, ctr := target[0], target[1], target[2], target[3]
	token := fmt.Sprintf("exec-through-the-api-server-%d", time.Now().UnixNano())
	out, err = rehearsalKubectl(ctx, cp, "exec", "-n", ns, name, "-c", ctr, "--", "/workload", "write", "/tmp/lockdown-exec", token)
	Expect(err).NotTo(HaveOccurred(), "kubectl exec %s/%s: %s", ns, name, out)
	// Read back on the node's engine: the exec really ran in the container.
	inner := docker.Client{Socket: rehearsalDir("nodes", node, "run", "docker.sock")}
	id, err := inner.Run(ctx, "ps", "-q", "--filter", "label=io.kubernetes.pod.name="+name, "--filter", "label=io.kubernetes.container.name="+ctr)
	Expect(err).NotTo(HaveOccurred())
	Expect(docker.Lines(id)).To(HaveLen(1))
	tar, err := inner.Run(ctx, "cp", docker.Lines(id)[0]+":/tmp/lockdown-exec", "-")
	Expect(err).NotTo(HaveOccurred())
	Expect(tar).To(ContainSubstring(token))
	out, err = rehearsalKubectl(ctx, cp, "logs", "-n", ns, name, "-c", ctr)
	Expect(err).NotTo(HaveOccurred(), out)
	Expect(out).To(ContainSubstring("workload start"))
}
