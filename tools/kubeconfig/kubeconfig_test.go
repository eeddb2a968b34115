package kubeconfig

import (
	"maps"
	"testing"

	"sigs.k8s.io/yaml"
)

// What a kubelet's loader reads back: the context's cluster and user,
// with the certificate fields left out for plain HTTP.
func TestMarshal(t *testing.T) {
	for _, c := range []Config{
		{Name: "rehearsal", Server: "https://127.0.0.1:26443", CertificateAuthority: "/etc/rehearsal/ca.crt",
			ClientCertificate: "/etc/rehearsal/node.crt", ClientKey: "/etc/rehearsal/node.key"},
		{Name: "suite", Server: "http://127.0.0.1:28080"},
	} {
		data, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			APIVersion  string `json:"apiVersion"`
			Kind        string
			Preferences map[string]bool
			Clusters    []struct {
				Name    string
				Cluster map[string]string
			}
			Users []struct {
				Name string
				User map[string]string
			}
			Contexts []struct {
				Name    string
				Context map[string]string
			}
			CurrentContext string `json:"current-context"`
		}
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			t.Fatalf("%s: %v\n%s", c.Name, err, data)
		}
		if f.APIVersion != "v1" || f.Kind != "Config" {
			t.Errorf("%s: not a v1 Config:\n%s", c.Name, data)
		}
		if f.CurrentContext != c.Name || len(f.Contexts) != 1 || f.Contexts[0].Name != c.Name ||
			f.Contexts[0].Context["cluster"] != c.Name || f.Contexts[0].Context["user"] != c.Name {
			t.Errorf("%s: current context does not name the cluster and user:\n%s", c.Name, data)
		}
		wantCluster := map[string]string{"server": c.Server}
		if c.CertificateAuthority != "" {
			wantCluster["certificate-authority"] = c.CertificateAuthority
		}
		wantUser := map[string]string{}
		if c.ClientCertificate != "" {
			wantUser["client-certificate"], wantUser["client-key"] = c.ClientCertificate, c.ClientKey
		}
		if len(f.Clusters) != 1 || !maps.Equal(f.Clusters[0].Cluster, wantCluster) {
			t.Errorf("%s: cluster = %v, want %v", c.Name, f.Clusters, wantCluster)
		}
		if len(f.Users) != 1 || !maps.Equal(f.Users[0].User, wantUser) {
			t.Errorf("%s: user = %v, want %v", c.Name, f.Users, wantUser)
		}
	}
}
