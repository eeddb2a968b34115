package controlplane

import (
	"sigs.k8s.io/yaml"

	"kubelet-toolchain/scripts/internal/fsutil"
)

// kubeconfig is the subset of clientcmd's v1 Config the rehearsal writes:
// one cluster, one user by client certificate, one context. File paths
// are as the reader sees them (a node reads its own under /etc/rehearsal).
type kubeconfig struct {
	APIVersion     string          `json:"apiVersion"`
	Kind           string          `json:"kind"`
	Clusters       []namedCluster  `json:"clusters"`
	Users          []namedUser     `json:"users"`
	Contexts       []namedContext  `json:"contexts"`
	CurrentContext string          `json:"current-context"`
	Preferences    map[string]bool `json:"preferences"`
}

type namedCluster struct {
	Name    string `json:"name"`
	Cluster struct {
		Server               string `json:"server"`
		CertificateAuthority string `json:"certificate-authority"`
	} `json:"cluster"`
}

type namedUser struct {
	Name string `json:"name"`
	User struct {
		ClientCertificate string `json:"client-certificate"`
		ClientKey         string `json:"client-key"`
	} `json:"user"`
}

type namedContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster string `json:"cluster"`
		User    string `json:"user"`
	} `json:"context"`
}

// writeKubeconfig writes a kubeconfig for server that authenticates with
// the certificate pair certBase.crt/.key, checking the server against ca.
func writeKubeconfig(path, server, ca, certBase string) error {
	c := kubeconfig{APIVersion: "v1", Kind: "Config", CurrentContext: "rehearsal", Preferences: map[string]bool{}}
	var cl namedCluster
	cl.Name = "rehearsal"
	cl.Cluster.Server = server
	cl.Cluster.CertificateAuthority = ca
	var u namedUser
	u.Name = "rehearsal"
	u.User.ClientCertificate = certBase + ".crt"
	u.User.ClientKey = certBase + ".key"
	var cx namedContext
	cx.Name = "rehearsal"
	cx.Context.Cluster, cx.Context.User = "rehearsal", "rehearsal"
	c.Clusters, c.Users, c.Contexts = []namedCluster{cl}, []namedUser{u}, []namedContext{cx}
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, b, 0o600)
}
