package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// The kubelet serves exec, attach, port-forward and logs on its TLS port.
// Its binary must carry Go's current TLS defaults (the secure-defaults
// series) whatever the release's build era: these specs shake hands with
// the real kubelet as old and current clients would.

// client is one TLS client configuration offered to the kubelet.
type client struct {
	name string
	cfg  *tls.Config
}

var (
	tls10    = &client{"TLS 1.0 client", &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10}}
	only3DES = &client{"3DES-only client", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{
		tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA}}}
	onlyRSAKex = &client{"RSA-key-exchange-only client", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{
		tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_RSA_WITH_AES_128_CBC_SHA, tls.TLS_RSA_WITH_AES_256_CBC_SHA}}}
	// What a 1.7/1.9 API server (Go 1.8/1.9 default client config) offers
	// when it calls the kubelet: TLS 1.2, ECDHE first, RSA and 3DES last.
	apiServer = &client{"1.7/1.9 API server client (TLS 1.2, Go 1.9 default suites)", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_RSA_WITH_AES_128_CBC_SHA, tls.TLS_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA}}}
	currentGo = &client{"current Go client (TLS 1.3)", &tls.Config{}}
)

// handshake connects to the kubelet's TLS port as c and returns the
// negotiated state, or the handshake error.
func handshake(ctx context.Context, port int, c *client) (tls.ConnectionState, error) {
	cfg := c.cfg.Clone()
	cfg.InsecureSkipVerify = true // the kubelet's self-signed serving cert; the handshake is what is tested
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState(), nil
}

// expectHandshakes checks every client against a running kubelet.
func expectHandshakes(ctx context.Context, k *framework.Kubelet, accepted, refused []*client) {
	GinkgoHelper()
	for _, c := range refused {
		st, err := handshake(ctx, k.Config.Port, c)
		Expect(err).To(HaveOccurred(), "%s: the kubelet accepted it (%s, %s)", c.name, tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
		// A refusal, not an unreachable port: the server answered with an alert.
		Expect(err.Error()).NotTo(ContainSubstring("connection refused"), c.name)
		fmt.Fprintf(GinkgoWriter, "refused  %-60s %v\n", c.name, err)
	}
	for _, c := range accepted {
		st, err := handshake(ctx, k.Config.Port, c)
		Expect(err).NotTo(HaveOccurred(), "%s refused\n%s", c.name, k.LogTail(20))
		if c.name == apiServer.name {
			Expect(tls.CipherSuiteName(st.CipherSuite)).To(HavePrefix("TLS_ECDHE_"), "%s negotiated a non-ECDHE suite", c.name)
		}
		fmt.Fprintf(GinkgoWriter, "accepted %-60s %s %s\n", c.name, tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
	}
}

// startTLSKubelet starts a kubelet and waits until its TLS port answers.
func startTLSKubelet(ctx context.Context, node *framework.Node, release, variant string, env []string, args ...string) *framework.Kubelet {
	GinkgoHelper()
	k, err := node.StartWith(release, variant, framework.KubeletOptions{Env: env, Args: args})
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func() error {
		if done, err := k.Exited(); done {
			StopTrying(fmt.Sprintf("kubelet exited: %v\n%s", err, k.LogTail(40))).Now()
		}
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", k.Config.Port), time.Second)
		if err == nil {
			conn.Close()
		}
		return err
	}).WithTimeout(framework.KubeletStartTimeout).WithPolling(framework.Poll).Should(Succeed(), func() string { return k.LogTail(40) })
	return k
}

var _ = Describe("kubelet TLS defaults", Label("tls", "seed"), func() {
	for _, release := range []string{"1.7.5", "1.9.11", "1.18.6"} {
		It(fmt.Sprintf("patched %s refuses TLS 1.0, 3DES and RSA key exchange and accepts an API server's client", release), kubelets(release), func(ctx SpecContext) {
			node := newNode(ctx)
			k := startTLSKubelet(ctx, node, release, "patched", nil)
			expectHandshakes(ctx, k, []*client{apiServer, currentGo}, []*client{tls10, only3DES, onlyRSAKex})
		}, SpecTimeout(3*time.Minute))

		// Negative control, and the override packagers document: the same
		// binary with the old defaults back at run time accepts 3DES and RSA
		// key exchange, so their refusal above comes from the compiled-in
		// defaults, not from the clients. TLS 1.0 stays refused: every
		// release's kubelet server sets MinVersion TLS 1.2 itself (1.18 by
		// default, unless --tls-min-version says otherwise).
		It(fmt.Sprintf("patched %s with GODEBUG=tls10server=1,tls3des=1,tlsrsakex=1 at run time accepts them again", release), kubelets(release), func(ctx SpecContext) {
			node := newNode(ctx)
			k := startTLSKubelet(ctx, node, release, "patched", []string{"GODEBUG=tls10server=1,tls3des=1,tlsrsakex=1"})
			expectHandshakes(ctx, k, []*client{apiServer, only3DES, onlyRSAKex}, []*client{tls10})
		}, SpecTimeout(3*time.Minute))
	}

	It("patched 1.18.6 still honours --tls-min-version and --tls-cipher-suites", kubelets("1.18.6"), func(ctx SpecContext) {
		node := newNode(ctx)
		k := startTLSKubelet(ctx, node, "1.18.6", "patched", nil,
			"--tls-min-version=VersionTLS10", // HTTP/2 needs an ECDHE AES-128-GCM suite in any list.
			"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,TLS_RSA_WITH_AES_128_GCM_SHA256")
		aes128GCM := &client{"ECDHE AES-128-GCM-only client", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}}
		aes256GCM := &client{"ECDHE AES-256-GCM-only client", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}}}
		// An explicit list wins over the defaults both ways: RSA key exchange
		// listed by the operator is served, a suite left out is not.
		expectHandshakes(ctx, k, []*client{tls10, aes128GCM, onlyRSAKex}, []*client{aes256GCM, only3DES})
	}, SpecTimeout(3*time.Minute))
})

// anonymousPods asks the kubelet's API for its pods without credentials
// and returns the HTTP status.
func anonymousPods(ctx context.Context, port int) (int, error) {
	return anonymousGet(ctx, fmt.Sprintf("https://127.0.0.1:%d/pods", port))
}

// anonymousGet is the status an unauthenticated GET of url gets (TLS,
// the server's certificate not checked).
func anonymousGet(ctx context.Context, url string) (int, error) {
	return status(ctx, &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}, url)
}

// portClosed says whether nothing listens on a loopback port.
func portClosed(port int) bool { return addrClosed(fmt.Sprintf("127.0.0.1:%d", port)) }

// addrClosed says whether a TCP connection to addr is refused.
func addrClosed(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		conn.Close()
		return false
	}
	return strings.Contains(err.Error(), "connection refused")
}

// Privileged pods run on the e2e's kubelets: their API must not serve
// anyone unauthenticated (it would be root on the machine through exec).
var _ = Describe("The e2e's host kubelets", Label("tls", "seed"), func() {
	for _, release := range []string{"1.7.5", "1.9.11", "1.12.10", "1.18.6"} {
		It(fmt.Sprintf("%s refuses anonymous requests and serves no read-only or cAdvisor port", release), kubelets(release), func(ctx SpecContext) {
			node := newNode(ctx)
			k := startTLSKubelet(ctx, node, release, "patched", nil)
			code, err := anonymousPods(ctx, k.Config.Port)
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusUnauthorized), "anonymous GET /pods")
			Expect(portClosed(framework.ReadOnlyPort)).To(BeTrue(), "the read-only port %d answers", framework.ReadOnlyPort)
			if framework.Minor(release) < 12 {
				Expect(portClosed(4194)).To(BeTrue(), "cAdvisor's port 4194 answers")
			}
			// Negative control: the same kubelet with anonymous requests
			// allowed (a later flag wins) serves them.
			k = startTLSKubelet(ctx, node, release, "patched", nil, "--anonymous-auth=true")
			code, err = anonymousPods(ctx, k.Config.Port)
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusOK), "anonymous GET /pods with --anonymous-auth=true: the refusal above proves nothing")
		}, SpecTimeout(3*time.Minute))
	}
})

// The conformance harness's kubelet serves the suite's API server alone
// (framework.WriteKubeletPKI): exec, logs and configz reach it through that
// server's proxy, with the client certificate the harness issues.
var _ = Describe("The conformance harness's kubelet", Label("tls", "seed"), kubelets("1.9.11"), func() {
	It("serves the suite's API server's client certificate, checked against its own CA, and nobody else", func(ctx SpecContext) {
		node := newNode(ctx)
		pki, err := framework.WriteKubeletPKI(filepath.Join(GinkgoT().TempDir(), "pki"), "kube-apiserver-kubelet-client", "localhost", "127.0.0.1")
		Expect(err).NotTo(HaveOccurred())
		apiServer := func(pki framework.KubeletPKI) *http.Client {
			GinkgoHelper()
			cert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
			Expect(err).NotTo(HaveOccurred())
			caPEM, err := os.ReadFile(pki.CA)
			Expect(err).NotTo(HaveOccurred())
			roots := x509.NewCertPool()
			Expect(roots.AppendCertsFromPEM(caPEM)).To(BeTrue())
			// As the API server dials the node named localhost: 127.0.0.1,
			// the kubelet's certificate checked against the CA.
			return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
				Certificates: []tls.Certificate{cert}, RootCAs: roots}}}
		}
		k := startTLSKubelet(ctx, node, "1.9.11", "patched", nil, pki.KubeletArgs()...)
		pods := fmt.Sprintf("https://127.0.0.1:%d/pods", k.Config.Port)
		code, err := status(ctx, apiServer(pki), pods)
		Expect(err).NotTo(HaveOccurred(), "the suite's API server's client, verifying the kubelet against the harness's CA")
		Expect(code).To(Equal(http.StatusOK))
		code, err = anonymousPods(ctx, k.Config.Port)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized), "anonymous GET /pods")
		Expect(portClosed(framework.ReadOnlyPort)).To(BeTrue(), "the read-only port %d answers", framework.ReadOnlyPort)
		// A certificate of another CA (another run's) is refused.
		other, err := framework.WriteKubeletPKI(filepath.Join(GinkgoT().TempDir(), "other"), "kube-apiserver-kubelet-client", "localhost", "127.0.0.1")
		Expect(err).NotTo(HaveOccurred())
		otherClient := apiServer(other)
		otherClient.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
		code, err = status(ctx, otherClient, pods)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized), "another CA's client certificate")

		// Negative control: the kubelet without the harness's flags (the
		// framework's keyless client CA, a self-signed serving certificate)
		// fails the same client both ways, so the 200 above came from them.
		k = startTLSKubelet(ctx, node, "1.9.11", "patched", nil)
		_, err = status(ctx, apiServer(pki), pods)
		Expect(err).To(MatchError(ContainSubstring("certificate")), "a self-signed kubelet certificate passed the CA check")
		insecure := apiServer(pki)
		insecure.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
		code, err = status(ctx, insecure, pods)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized), "the harness's client certificate on a kubelet that does not trust its CA")
	}, SpecTimeout(3*time.Minute))
})
