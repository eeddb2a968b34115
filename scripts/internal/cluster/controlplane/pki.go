package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
)

// The cluster's certificates live as long as one rehearsal cluster; a day
// is more than any rehearsal takes, and short enough not to matter if a
// key leaks off a throwaway machine.
const certLifetime = 24 * time.Hour

// CA signs every certificate of one rehearsal cluster.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Identity is what a client certificate says to the API server: the
// common name is the user, the organisations its groups (RBAC's and the
// Node authorizer's view of it).
type Identity struct {
	CommonName string
	Groups     []string
}

// Identities the control plane and nodes authenticate as.
var (
	AdminIdentity             = Identity{CommonName: "rehearsal-admin", Groups: []string{"system:masters"}}
	ControllerManagerIdentity = Identity{CommonName: "system:kube-controller-manager"}
	SchedulerIdentity         = Identity{CommonName: "system:kube-scheduler"}
	KubeProxyIdentity         = Identity{CommonName: "system:kube-proxy"}
	// APIServerKubeletIdentity is the API server's client to kubelets
	// (logs, exec, port-forward). 1.9 has no system:kubelet-api-admin
	// role: KubeletAPIRBAC grants it the kubelet API and nothing else.
	APIServerKubeletIdentity = Identity{CommonName: "kube-apiserver-kubelet-client"}
	// APIServerEtcdIdentity is the API server's client to etcd, which
	// checks only that the CA signed it.
	APIServerEtcdIdentity = Identity{CommonName: "kube-apiserver-etcd-client"}
)

// NodeIdentity is how a kubelet authenticates: the Node authorizer and the
// NodeRestriction admission plugin read the node name from it.
func NodeIdentity(node string) Identity {
	return Identity{CommonName: "system:node:" + node, Groups: []string{"system:nodes"}}
}

// NewCA makes a fresh self-signed CA.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(certLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadCA reads a CA written by WriteCA.
func LoadCA(dir string) (*CA, error) {
	cert, err := readCert(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM block", filepath.Join(dir, "ca.key"))
	}
	key, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "ca.key"), err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Write stores the CA as dir/ca.crt and dir/ca.key.
func (ca *CA) Write(dir string) error {
	keyDER, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca.key"), "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", ca.Cert.Raw, 0o644)
}

// Client issues a client certificate for id as dir/<name>.crt and .key.
func (ca *CA) Client(dir, name string, id Identity) error {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: id.CommonName, Organization: id.Groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return ca.issue(dir, name, tmpl)
}

// Serving issues a serving certificate for the given names and IPs.
func (ca *CA) Serving(dir, name string, hosts []string, ips []net.IP) error {
	return ca.named(dir, name, hosts, ips, x509.ExtKeyUsageServerAuth)
}

// Peer issues a certificate that both serves and authenticates as a
// client: etcd's, whose gRPC gateway dials etcd itself with the serving
// certificate, and whose peer port checks both ends.
func (ca *CA) Peer(dir, name string, hosts []string, ips []net.IP) error {
	return ca.named(dir, name, hosts, ips, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

// named issues a certificate for hosts and ips with the given usages.
func (ca *CA) named(dir, name string, hosts []string, ips []net.IP, usages ...x509.ExtKeyUsage) error {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		DNSNames:    hosts,
		IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: usages,
	}
	return ca.issue(dir, name, tmpl)
}

func (ca *CA) issue(dir, name string, tmpl *x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = ca.Cert.NotAfter
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return fmt.Errorf("issuing %s: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644)
}

// ServiceAccountKey writes the key pair the API server verifies and the
// controller manager signs service-account tokens with (sa.key, sa.pub).
func ServiceAccountKey(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER, 0o644)
}

func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return fsutil.WriteFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(errors.New("crypto/rand failed: " + err.Error()))
	}
	return n
}
