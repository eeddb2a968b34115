package controlplane

import (
	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/tools/kubeconfig"
)

// writeKubeconfig writes a kubeconfig for server that authenticates with
// the certificate pair certBase.crt/.key, checking the server against ca.
// File paths are as the reader sees them (a node reads its own under
// /etc/rehearsal).
func writeKubeconfig(path, server, ca, certBase string) error {
	b, err := kubeconfig.Config{Name: "rehearsal", Server: server, CertificateAuthority: ca,
		ClientCertificate: certBase + ".crt", ClientKey: certBase + ".key"}.Marshal()
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, b, 0o600)
}
