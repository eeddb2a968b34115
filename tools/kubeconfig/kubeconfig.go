// Package kubeconfig writes the kubeconfigs the toolchain's kubelets and
// clients read: one cluster, one user, one context (the subset of
// clientcmd's v1 Config they need). Paths are as the reader sees them.
package kubeconfig

import "sigs.k8s.io/yaml"

// Config is one server and how to reach it.
type Config struct {
	// Name names the cluster, the user and the context.
	Name   string
	Server string
	// CertificateAuthority checks an https server; empty for plain HTTP.
	CertificateAuthority string
	// ClientCertificate and ClientKey authenticate the user; empty for none.
	ClientCertificate, ClientKey string
}

type file struct {
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
		CertificateAuthority string `json:"certificate-authority,omitempty"`
	} `json:"cluster"`
}

type namedUser struct {
	Name string `json:"name"`
	User struct {
		ClientCertificate string `json:"client-certificate,omitempty"`
		ClientKey         string `json:"client-key,omitempty"`
	} `json:"user"`
}

type namedContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster string `json:"cluster"`
		User    string `json:"user"`
	} `json:"context"`
}

// Marshal is c as a kubeconfig file.
func (c Config) Marshal() ([]byte, error) {
	f := file{APIVersion: "v1", Kind: "Config", CurrentContext: c.Name, Preferences: map[string]bool{}}
	var cl namedCluster
	cl.Name = c.Name
	cl.Cluster.Server, cl.Cluster.CertificateAuthority = c.Server, c.CertificateAuthority
	var u namedUser
	u.Name = c.Name
	u.User.ClientCertificate, u.User.ClientKey = c.ClientCertificate, c.ClientKey
	var cx namedContext
	cx.Name = c.Name
	cx.Context.Cluster, cx.Context.User = c.Name, c.Name
	f.Clusters, f.Users, f.Contexts = []namedCluster{cl}, []namedUser{u}, []namedContext{cx}
	return yaml.Marshal(f)
}
