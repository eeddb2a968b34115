// What: the kubelet binary gets Go's current defaults for every TLS, X.509
// and crypto setting that Go ships a GODEBUG for, whatever the tree's era.
//
// Why: a GOPATH build (1.7, 1.9) has no go.mod, and 1.18's go.mod says
// `go 1.13`; Go then compiles in its oldest compatible defaults (Go 1.20's),
// so `go version -m kubelet` showed tls10server=1, tls3des=1, tlsrsakex=1,
// tlssha1=1, tlsunsafeekm=1, rsa1024min=0 and x509negativeserial=1. The
// kubelet serves exec, attach, port-forward and logs on :10250 over TLS:
// those builds accepted 3DES, RSA key exchange, SHA-1 handshake signatures
// and RSA keys under 1024 bits, which Go itself refuses by default since
// 1.22-1.25 (TLS 1.0/1.1 only where a server leaves MinVersion unset; the
// kubelet server of these releases sets TLS 1.2 itself). A //go:debug directive in the main
// package works in both build modes (a go.mod godebug block would not reach
// the GOPATH builds), so one file serves every release.
//
// Kept at the era's values on purpose (not security settings; the code was
// written against them): asynctimerchan=1 (timer channels as before Go
// 1.23), panicnil=1, httpmuxgo121=1, httplaxcontentlength=1,
// httpservecontentkeepheaders=1, randseednop=0 (rand.Seed still seeds),
// gotypesalias, multipathtcp, netedns0, urlmaxqueryparams, urlstrictcolons,
// httpcookiemaxnum, updatemaxprocs, containermaxprocs, decoratemappings.
//
// --tls-min-version and --tls-cipher-suites still win: these are only the
// defaults for a config that leaves them unset. An operator who really needs
// an old client to connect can set them at run time, e.g.
// GODEBUG=tls10server=1,tlsrsakex=1 in the kubelet's environment (the
// environment overrides the compiled-in defaults).
//
// Upstream: Kubernetes builds these releases with Go 1.8-1.13, which had
// none of these settings; current Kubernetes sets its own godebug defaults
// in go.mod. See https://go.dev/doc/godebug.
//
// Drop: when the release is built by a module whose go line is 1.26 or newer
// (its defaults are then these); never for the releases pinned here.

//go:debug cryptocustomrand=0
//go:debug rsa1024min=1
//go:debug tls10server=0
//go:debug tls3des=0
//go:debug tlsmlkem=1
//go:debug tlsrsakex=0
//go:debug tlssecpmlkem=1
//go:debug tlssha1=0
//go:debug tlsunsafeekm=0
//go:debug x509keypairleaf=1
//go:debug x509negativeserial=0
//go:debug x509rsacrt=1
//go:debug x509sha256skid=1
//go:debug x509usepolicies=1

package main
