package repo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/base/testtool"
	"kubelet-toolchain/tools/execx"
)

// The files an operator copies turn both checks on and trust only this
// repository's key.
func TestOperatorFiles(t *testing.T) {
	repo := repoFile("v1.9", "https://pkgs.example.invalid/kubelet/v1.9")
	for _, want := range []string{"[kubelet-toolchain]\n", "baseurl=https://pkgs.example.invalid/kubelet/v1.9/yum\n", "gpgcheck=1\n", "repo_gpgcheck=1\n",
		"skip_if_unavailable=False\n", "gpgkey=https://pkgs.example.invalid/kubelet/v1.9/KEY.asc\n"} {
		if !strings.Contains(repo, want) {
			t.Errorf(".repo file lacks %q:\n%s", want, repo)
		}
	}
	if got, want := listLine("https://pkgs.example.invalid/kubelet/v1.9"), "deb [arch=amd64 signed-by=/etc/apt/keyrings/kubelet-toolchain.gpg] https://pkgs.example.invalid/kubelet/v1.9/apt stable main"; got != want {
		t.Errorf("sources.list line %q, want %q", got, want)
	}
}

// GPG_KEY: empty makes a throwaway key; a secret key file is imported; a
// key id is looked up in the caller's keyring (GNUPGHOME); a key that is
// not there, or an id matching two keys, is refused by name.
func TestSignerKeys(t *testing.T) {
	testtool.Need(t, "gpg", "gpgconf")
	ctx := context.Background()
	throwaway, err := newSigner(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer throwaway.close()
	if !throwaway.throwaway || len(throwaway.fpr) != 40 || throwaway.uid != ThrowawayUID {
		t.Fatalf("throwaway signer %+v", throwaway)
	}
	// Its secret key as a file, and in a keyring of "the caller's".
	keyFile := filepath.Join(t.TempDir(), "secret.asc")
	if _, err := throwaway.gpg(ctx, "--armor", "--output", keyFile, "--export-secret-keys", throwaway.fpr); err != nil {
		t.Fatal(err)
	}
	fromFile, err := newSigner(ctx, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer fromFile.close()
	if fromFile.throwaway || fromFile.fpr != throwaway.fpr {
		t.Errorf("signer from a key file: %+v, want fingerprint %s", fromFile, throwaway.fpr)
	}
	home := throwaway.scratch
	t.Setenv("GNUPGHOME", home)
	byID, err := newSigner(ctx, throwaway.fpr[24:])
	if err != nil {
		t.Fatal(err)
	}
	if byID.scratch != "" || byID.home != home || byID.fpr != throwaway.fpr {
		t.Errorf("signer by key id: %+v", byID)
	}
	// Signatures it makes verify against the public key it exports.
	data := filepath.Join(t.TempDir(), "Release")
	os.WriteFile(data, []byte("Origin: test\n"), 0o644)
	if err := byID.clearSign(ctx, data, data+".in"); err != nil {
		t.Fatal(err)
	}
	pub, err := byID.publicKey(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	keyring := filepath.Join(t.TempDir(), "k.gpg")
	os.WriteFile(keyring, pub, 0o644)
	if _, err := execx.Run(ctx, execx.Cmd{Name: "gpgv", Args: []string{"--keyring", keyring, data + ".in"}}); err != nil {
		t.Errorf("InRelease-style signature does not verify with the exported key: %v", err)
	}
	if _, err := newSigner(ctx, "/no/such/key.asc"); err == nil || !strings.Contains(err.Error(), "no such key file") {
		t.Errorf("a missing key file: %v", err)
	}
	if _, err := newSigner(ctx, "no-such-key@example.invalid"); err == nil || !strings.Contains(err.Error(), `GPG_KEY "no-such-key@example.invalid"`) {
		t.Errorf("an unknown key id: %v", err)
	}
	// A second key in the same keyring: an id matching both is refused.
	if _, err := byID.gpg(ctx, "--passphrase", "", "--quick-gen-key", "Second key <toolchain@kubelet-toolchain.invalid>", "rsa2048", "sign", "1d"); err != nil {
		t.Fatal(err)
	}
	if _, err := newSigner(ctx, "toolchain@kubelet-toolchain.invalid"); err == nil || !strings.Contains(err.Error(), "2 secret keys match") {
		t.Errorf("an id matching two keys: %v", err)
	}
}

// Minors sort as versions, each repository holding its own only.
func TestByMinor(t *testing.T) {
	var pkgs []Package
	for _, r := range []string{"1.23.17", "1.9.11", "1.13.12", "1.9.11"} {
		pkgs = append(pkgs, Package{Release: &matrix.Release{Release: r}})
	}
	minors, by := ByMinor(pkgs)
	if got := strings.Join(minors, " "); got != "v1.9 v1.13 v1.23" || len(by["v1.9"]) != 2 {
		t.Errorf("minors %s, v1.9 holds %d", got, len(by["v1.9"]))
	}
	dir := t.TempDir()
	for _, f := range []string{"yum/Packages/kubelet-1.9.11-1.k19_fixes.5.x86_64.rpm", "apt/pool/main/k/kubelet/kubelet_1.9.11+k19-fixes.5_amd64.deb"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := onlyMinor(dir, "v1.9"); err != nil {
		t.Error(err)
	}
	if err := onlyMinor(dir, "v1.1"); err == nil || !strings.Contains(err.Error(), "another minor") {
		t.Errorf("a 1.9 kubelet in v1.1: %v", err)
	}
}
