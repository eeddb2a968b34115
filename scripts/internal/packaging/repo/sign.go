package repo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/tools/execx"
)

// signer signs with one OpenPGP key through gpg: the caller's (a key id
// in their keyring, or a secret key file imported into a scratch keyring)
// or a throwaway one made for the run.
type signer struct {
	// home is the GNUPGHOME gpg and rpmsign use; "" is the caller's.
	home string
	// scratch is a keyring of ours, removed (its agent stopped) by close.
	scratch   string
	fpr, uid  string
	throwaway bool
}

// ThrowawayUID names the key made when no GPG_KEY is given.
const ThrowawayUID = "Kubelet toolchain throwaway repository key (one make repo run, not kept) <toolchain@kubelet-toolchain.invalid>"

// newSigner finds key: "" makes a throwaway key (RSA: CentOS 7's rpm and
// the apt of Ubuntu 16.04 verify no EdDSA), an existing file is imported
// as a secret key, anything else is a key id or fingerprint of the
// caller's keyring.
func newSigner(ctx context.Context, key string) (_ *signer, err error) {
	s := &signer{home: os.Getenv("GNUPGHOME")}
	_, statErr := os.Stat(key)
	if strings.ContainsRune(key, '/') && statErr != nil {
		return nil, fmt.Errorf("GPG_KEY %s: no such key file (%w)", key, statErr)
	}
	if key == "" || statErr == nil {
		if s.scratch, err = os.MkdirTemp("", "kubelet-repo-gnupg-"); err != nil {
			return nil, err
		}
		s.home = s.scratch
		defer func() {
			if err != nil {
				s.close()
			}
		}()
	}
	switch {
	case key == "":
		s.throwaway = true
		if _, err := s.gpg(ctx, "--passphrase", "", "--quick-gen-key", ThrowawayUID, "rsa3072", "sign", "1y"); err != nil {
			return nil, fmt.Errorf("making a throwaway signing key: %w", err)
		}
	case s.scratch != "":
		if _, err := s.gpg(ctx, "--import", key); err != nil {
			return nil, fmt.Errorf("GPG_KEY %s: importing the secret key: %w", key, err)
		}
		key = ""
	}
	list := []string{"--with-colons", "--list-secret-keys"}
	if key != "" {
		list = append(list, key)
	}
	out, err := s.gpg(ctx, list...)
	if err != nil {
		return nil, fmt.Errorf("GPG_KEY %q: no secret key to sign with: %w", key, err)
	}
	// A primary key's fingerprint is the fpr record right after its sec
	// record (a subkey's follows its ssb).
	var fprs []string
	prev := ""
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(l, ":")
		switch {
		case f[0] == "fpr" && prev == "sec" && len(f) > 9:
			fprs = append(fprs, f[9])
		case f[0] == "uid" && len(f) > 9 && s.uid == "":
			s.uid = f[9]
		}
		prev = f[0]
	}
	if len(fprs) != 1 {
		return nil, fmt.Errorf("GPG_KEY %q: %d secret keys match (%s); name exactly one (its fingerprint)", key, len(fprs), strings.Join(fprs, ", "))
	}
	s.fpr = fprs[0]
	return s, nil
}

// gpg runs gpg on our keyring and returns its standard output (an error
// carries its messages).
func (s *signer) gpg(ctx context.Context, args ...string) ([]byte, error) {
	a := []string{"--batch", "--yes"}
	if s.home != "" {
		a = append(a, "--homedir", s.home)
	}
	var out bytes.Buffer
	_, err := execx.Run(ctx, execx.Cmd{Name: "gpg", Args: append(a, args...), Stdout: &out, Timeout: 5 * time.Minute})
	return out.Bytes(), err
}

// detachSign writes file's detached signature to out (armored or binary).
func (s *signer) detachSign(ctx context.Context, file, out string, armor bool) error {
	a := []string{"--local-user", s.fpr, "--digest-algo", "SHA256", "--output", out, "--detach-sign"}
	if armor {
		a = append(a, "--armor")
	}
	_, err := s.gpg(ctx, append(a, file)...)
	return err
}

// clearSign writes file, signed inline, to out (apt's InRelease).
func (s *signer) clearSign(ctx context.Context, file, out string) error {
	_, err := s.gpg(ctx, "--local-user", s.fpr, "--digest-algo", "SHA256", "--output", out, "--clearsign", file)
	return err
}

// signRPMs adds the key's signatures to each package, in place: a v4
// header signature and, with --rpmv3, the header+payload one that rpm
// before 4.14 (CentOS 7's 4.11) checks.
func (s *signer) signRPMs(ctx context.Context, files ...string) error {
	gpg, err := exec.LookPath("gpg")
	if err != nil {
		return err
	}
	a := []string{"--addsign", "--rpmv3", "--define", "__gpg " + gpg, "--define", "_gpg_name " + s.fpr, "--define", "_gpg_digest_algo sha256"}
	if s.home != "" {
		a = append(a, "--define", "_gpg_path "+s.home)
	}
	_, err = execx.Run(ctx, execx.Cmd{Name: "rpmsign", Args: append(a, files...), Timeout: 10 * time.Minute})
	return err
}

// publicKey is the key's public part, armored or binary (a keyring apt's
// signed-by reads on every release).
func (s *signer) publicKey(ctx context.Context, armor bool) ([]byte, error) {
	a := []string{"--export"}
	if armor {
		a = append(a, "--armor")
	}
	return s.gpg(ctx, append(a, s.fpr)...)
}

// close stops the agent of our scratch keyring and removes it (with a
// throwaway key, its only secret).
func (s *signer) close() {
	if s.scratch == "" {
		return
	}
	execx.Run(context.Background(), execx.Cmd{Name: "gpgconf", Args: []string{"--homedir", s.scratch, "--kill", "all"}, Timeout: time.Minute})
	fsutil.RemoveAll(s.scratch)
}
