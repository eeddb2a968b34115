package controlplane

import (
	"crypto/x509"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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

// WritePKI's etcd certificates serve and authenticate (etcd's gateway
// dials etcd with its serving certificate; peers check both ends), and the
// API server's kubelet client is no cluster admin: its only grant is the
// kubelet API role, bound to exactly its name.
func TestClusterPKIAndKubeletAPIRole(t *testing.T) {
	cp := &ControlPlane{Layout: Layout{Dir: t.TempDir()}, Address: "198.18.202.1"}
	if err := cp.WritePKI(); err != nil {
		t.Fatal(err)
	}
	ca, err := LoadCA(cp.Layout.PKI())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for _, name := range []string{"etcd-server", "etcd-peer"} {
		c, err := readCert(filepath.Join(cp.Layout.PKI(), name+".crt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{u}}); err != nil {
				t.Errorf("%s for 127.0.0.1, usage %v: %v", name, u, err)
			}
		}
	}
	kc, err := readCert(filepath.Join(cp.Layout.PKI(), "apiserver-kubelet-client.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(kc.Subject.Organization) != 0 {
		t.Errorf("the API server's kubelet client has groups %q (system:masters would make it cluster admin)", kc.Subject.Organization)
	}
	var binding struct {
		Kind     string `json:"kind"`
		Subjects []struct{ Kind, Name string }
		RoleRef  struct{ Name string } `json:"roleRef"`
	}
	docs := strings.Split(string(kubeletAPIRBAC), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("kubelet-api-rbac.yaml: %d documents, want the role and its binding", len(docs))
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &binding); err != nil {
		t.Fatal(err)
	}
	if binding.Kind != "ClusterRoleBinding" || len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "User" || binding.Subjects[0].Name != kc.Subject.CommonName {
		t.Errorf("binding %+v does not name the certificate's user %q", binding, kc.Subject.CommonName)
	}

	node := t.TempDir()
	if err := cp.KubeletServing(node, "node-1", "198.18.202.7"); err != nil {
		t.Fatal(err)
	}
	s, err := readCert(filepath.Join(node, "kubelet-serving.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(x509.VerifyOptions{Roots: roots, DNSName: "198.18.202.7", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("kubelet serving certificate for its InternalIP: %v", err)
	}
	if err := cp.KubeletServing(node, "node-1", "not-an-ip"); err == nil {
		t.Error("a bad address gave a certificate")
	}
}
