package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// A throwaway certificate authority: it lives as long as one run, and its
// key is never written, so nothing it did not sign before the run ends can
// ever be trusted by the kubelets that name it.
type throwawayCA struct {
	cert   *x509.Certificate
	der    []byte
	key    *ecdsa.PrivateKey
	serial int64
}

// lifetime is a day: longer than any run, short if a file is left behind.
const lifetime = 24 * time.Hour

func newThrowawayCA(name string) (*throwawayCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(lifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &throwawayCA{cert: cert, der: der, key: key, serial: 1}, nil
}

// issue writes certPath and keyPath (0600): a leaf certificate for cn,
// for a server (its names and addresses) or a client.
func (ca *throwawayCA) issue(certPath, keyPath, cn string, usage x509.ExtKeyUsage, hosts ...string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: ca.cert.NotAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(keyPath, "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(certPath, "CERTIFICATE", der, 0o644)
}

func (ca *throwawayCA) write(path string) error { return writePEM(path, "CERTIFICATE", ca.der, 0o644) }

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

// writeClientCA writes a CA certificate whose key is never kept: a
// kubelet needs an authenticator to refuse anonymous requests, and with
// this one no client can authenticate.
func writeClientCA(dir string) (string, error) {
	path := filepath.Join(dir, "client-ca.crt")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	ca, err := newThrowawayCA("e2e kubelet client CA (no key kept)")
	if err != nil {
		return "", err
	}
	return path, ca.write(path)
}

// KubeletPKI is what a kubelet and the one API server allowed to reach it
// need: the kubelet serves ServingCert and trusts CA for clients; the API
// server presents ClientCert and checks the kubelet against CA. CA's key is
// discarded once both are issued.
type KubeletPKI struct {
	CA                      string
	ServingCert, ServingKey string
	ClientCert, ClientKey   string
}

// KubeletArgs are the kubelet flags that serve and require this PKI.
// Later flags win: they replace the framework's keyless client CA.
func (p KubeletPKI) KubeletArgs() []string {
	return []string{"--client-ca-file=" + p.CA, "--tls-cert-file=" + p.ServingCert, "--tls-private-key-file=" + p.ServingKey}
}

// WriteKubeletPKI issues, under dir, a serving certificate for the
// kubelet's hosts (names or addresses the API server dials) and a client
// certificate for clientCN, both from a new throwaway CA.
func WriteKubeletPKI(dir, clientCN string, hosts ...string) (KubeletPKI, error) {
	p := KubeletPKI{
		CA:          filepath.Join(dir, "ca.crt"),
		ServingCert: filepath.Join(dir, "kubelet.crt"), ServingKey: filepath.Join(dir, "kubelet.key"),
		ClientCert: filepath.Join(dir, "apiserver-kubelet-client.crt"), ClientKey: filepath.Join(dir, "apiserver-kubelet-client.key"),
	}
	ca, err := newThrowawayCA("e2e kubelet CA (key discarded after issuing)")
	if err != nil {
		return p, err
	}
	if err := ca.write(p.CA); err != nil {
		return p, err
	}
	if err := ca.issue(p.ServingCert, p.ServingKey, "kubelet", x509.ExtKeyUsageServerAuth, hosts...); err != nil {
		return p, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	if err := ca.issue(p.ClientCert, p.ClientKey, clientCN, x509.ExtKeyUsageClientAuth); err != nil {
		return p, fmt.Errorf("API server's kubelet client certificate: %w", err)
	}
	return p, nil
}
