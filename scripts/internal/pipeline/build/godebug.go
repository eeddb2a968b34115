package build

import (
	"debug/buildinfo"
	"fmt"
	"strings"
)

// InsecureGODEBUG are the compiled-in GODEBUG defaults no kubelet we ship
// may carry: each re-enables something Go's TLS or X.509 stack refuses by
// default (TLS 1.0 servers, 3DES, RSA key exchange, SHA-1 handshake
// signatures, unsafe EKM, RSA keys under 1024 bits, negative serials).
// A tree without a recent go.mod gets them all; the secure-defaults series
// turns them off, and this check keeps it that way.
var InsecureGODEBUG = []string{
	"rsa1024min=0", "tls10server=1", "tls3des=1", "tlsrsakex=1",
	"tlssha1=1", "tlsunsafeekm=1", "x509negativeserial=1",
}

// DefaultGODEBUG returns the GODEBUG defaults compiled into a Go binary.
func DefaultGODEBUG(binary string) (string, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return "", fmt.Errorf("reading build info of %s: %w", binary, err)
	}
	for _, s := range info.Settings {
		if s.Key == "DefaultGODEBUG" {
			return s.Value, nil
		}
	}
	return "", nil
}

// CheckGODEBUG fails if binary's compiled-in GODEBUG defaults include any
// of InsecureGODEBUG.
func CheckGODEBUG(binary string) error {
	def, err := DefaultGODEBUG(binary)
	if err != nil {
		return err
	}
	var bad []string
	for _, kv := range strings.Split(def, ",") {
		for _, insecure := range InsecureGODEBUG {
			if kv == insecure {
				bad = append(bad, kv)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s carries insecure GODEBUG defaults %s (is the secure-defaults series in versions.yaml?)", binary, strings.Join(bad, ","))
	}
	return nil
}
