package controlplane

import (
	"crypto/x509"
	"net"
	"path/filepath"
	"testing"
)

// The API server checks client certificates against the CA and reads user
// and groups from subject CN and O; kubelets and kubectl check the serving
// certificate's names. Both are verified here the way crypto/tls does.
func TestPKIChainsAndIdentities(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.Write(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Cert.Equal(ca.Cert) || !loaded.Key.Equal(ca.Key) {
		t.Fatal("LoadCA did not read back what Write stored")
	}
	if err := ca.Client(dir, "kubelet", NodeIdentity("node-1")); err != nil {
		t.Fatal(err)
	}
	if err := ca.Serving(dir, "apiserver", []string{"kubernetes"}, []net.IP{net.ParseIP("198.18.202.1")}); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)

	client, err := readCert(filepath.Join(dir, "kubelet.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client certificate does not verify for client auth: %v", err)
	}
	if client.Subject.CommonName != "system:node:node-1" || len(client.Subject.Organization) != 1 || client.Subject.Organization[0] != "system:nodes" {
		t.Fatalf("kubelet identity = %q %q", client.Subject.CommonName, client.Subject.Organization)
	}

	server, err := readCert(filepath.Join(dir, "apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"198.18.202.1", "kubernetes"} {
		if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: "198.18.202.2"}); err == nil {
		t.Error("serving certificate verified for an address it does not name")
	}
	if _, err := server.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("serving certificate usable as a client certificate")
	}
}
