package checksums

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/testfile"
	"kubelet-toolchain/tools/execx"
)

const (
	sumA = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb" // sha256("a")
	sumB = "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d" // sha256("b")
)

func TestParseAndLinesRoundTrip(t *testing.T) {
	f, err := Parse([]byte("# comment\n\n"+sumB+"  b.txt\n"+sumA+" *a.txt\n"), "SUMS")
	if err != nil {
		t.Fatal(err)
	}
	if f["a.txt"] != sumA || f["b.txt"] != sumB || len(f) != 2 {
		t.Fatalf("parsed %v", f)
	}
	want := sumA + "  a.txt\n" + sumB + "  b.txt\n"
	if got := string(f.Lines()); got != want {
		t.Errorf("Lines:\n%s\nwant\n%s", got, want)
	}
	if m := string(f.Marshal()); !strings.HasPrefix(m, "# ") || !strings.HasSuffix(m, want) {
		t.Errorf("Marshal:\n%s", m)
	}
	again, err := Parse(f.Marshal(), "CHECKSUMS")
	if err != nil || len(again) != 2 || again["a.txt"] != sumA {
		t.Errorf("Marshal does not parse back: %v %v", again, err)
	}
}

func TestParseNamesTheBadLine(t *testing.T) {
	_, err := Parse([]byte(sumA+"  a\nnot a sum line\n"), "CHECKSUMS")
	if err == nil || !strings.Contains(err.Error(), "CHECKSUMS:2:") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "CHECKSUMS"))
	if err != nil || len(f) != 0 {
		t.Fatalf("%v %v", f, err)
	}
}

// What Lines writes, sha256sum -c accepts.
func TestLinesReadBySha256sum(t *testing.T) {
	dir := t.TempDir()
	testfile.Write(t, filepath.Join(dir, "a.txt"), "a")
	testfile.Write(t, filepath.Join(dir, "b.txt"), "b")
	f := File{}
	for _, n := range []string{"a.txt", "b.txt"} {
		sum, err := SHA256(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		f[n] = sum
	}
	if f["a.txt"] != sumA {
		t.Fatalf("SHA256(a) = %s", f["a.txt"])
	}
	testfile.Write(t, filepath.Join(dir, "SHA256SUMS"), string(f.Lines()))
	if _, err := execx.Run(context.Background(), execx.Cmd{Name: "sha256sum", Args: []string{"-c", "SHA256SUMS"}, Dir: dir}); err != nil {
		t.Fatal(err)
	}
}

func TestBuiltVerifyUpdate(t *testing.T) {
	out := t.TempDir()
	testfile.Write(t, filepath.Join(out, Key("1.9.11", "patched")), "a")
	testfile.Write(t, filepath.Join(out, Key("1.9.11", "vanilla")), "b")
	testfile.Write(t, filepath.Join(out, Key("1.18.6", "vanilla")), "a")
	var keys []string
	for _, r := range []string{"1.7.5", "1.9.11", "1.18.6"} {
		keys = append(keys, Key(r, "patched"), Key(r, "vanilla"))
	}
	built, err := BuiltKeys(out, keys)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Key("1.9.11", "patched"), sumA}, {Key("1.9.11", "vanilla"), sumB}, {Key("1.18.6", "vanilla"), sumA}}
	if len(built) != len(want) {
		t.Fatalf("built %v", built)
	}
	for i := range want {
		if built[i] != want[i] {
			t.Errorf("built[%d] = %v, want %v", i, built[i], want[i])
		}
	}

	f := File{Key("1.9.11", "patched"): sumA, Key("1.9.11", "vanilla"): sumA}
	var w strings.Builder
	err = f.Verify(built, &w)
	if err == nil || !strings.Contains(err.Error(), "2 of 3 binaries do not match CHECKSUMS") {
		t.Errorf("err = %v", err)
	}
	wantOut := "ok  " + sumA + "  1.9.11/patched/bin/linux/amd64/kubelet\n" +
		"1.9.11/vanilla/bin/linux/amd64/kubelet: MISMATCH\n  expected " + sumA + "\n  actual   " + sumB + "\n" +
		"1.18.6/vanilla/bin/linux/amd64/kubelet: no expected checksum\n  actual   " + sumA + "\n"
	if w.String() != wantOut {
		t.Errorf("output:\n%s\nwant\n%s", w.String(), wantOut)
	}

	w.Reset()
	f.Update(built, &w)
	if strings.Count(w.String(), "\n") != 3 || f[Key("1.9.11", "vanilla")] != sumB || f[Key("1.18.6", "vanilla")] != sumA {
		t.Errorf("after Update %v, printed\n%s", f, w.String())
	}
	w.Reset()
	if err := f.Verify(built, &w); err != nil || strings.Count(w.String(), "ok  ") != 3 {
		t.Errorf("updated file does not verify: %v\n%s", err, w.String())
	}
	if err := f.Verify(nil, &w); err != ErrNothingBuilt {
		t.Errorf("nothing built: %v", err)
	}
}

// Control-plane binaries are keyed by their path under _output/ and only
// those built are hashed.
func TestBuiltControlPlane(t *testing.T) {
	out := t.TempDir()
	testfile.Write(t, filepath.Join(out, "1.9.11/control-plane/bin/kube-apiserver"), "a")
	testfile.Write(t, filepath.Join(out, "1.9.11/control-plane/bin/kubectl"), "b")
	var keys []string
	for _, r := range []string{"1.7.5", "1.9.11"} {
		for _, c := range []string{"kube-apiserver", "kube-scheduler", "kubectl"} {
			keys = append(keys, KeyOf(out, filepath.Join(out, r, "control-plane", "bin", c)))
		}
	}
	built, err := BuiltKeys(out, keys)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"1.9.11/control-plane/bin/kube-apiserver", sumA}, {"1.9.11/control-plane/bin/kubectl", sumB}}
	if len(built) != len(want) || built[0] != want[0] || built[1] != want[1] {
		t.Errorf("built %v, want %v", built, want)
	}
}

func TestNote(t *testing.T) {
	f := File{"1.9.11/patched/bin/linux/amd64/kubelet": "aaa"}
	for _, tc := range []struct{ key, sum, want string }{
		{"1.9.11/patched/bin/linux/amd64/kubelet", "aaa", ""},
		{"1.9.11/patched/bin/linux/amd64/kubelet", "bbb", "WARNING: 1.9.11/patched/bin/linux/amd64/kubelet differs from CHECKSUMS\n  expected aaa\n  actual   bbb\n  (make verify-checksums fails on this)\n"},
		{"1.9.11/vanilla/bin/linux/amd64/kubelet", "ccc", "note: CHECKSUMS has no entry for 1.9.11/vanilla/bin/linux/amd64/kubelet (make update-checksums records it)\n"},
	} {
		var w strings.Builder
		f.Note(tc.key, tc.sum, &w)
		if w.String() != tc.want {
			t.Errorf("Note(%s, %s) = %q, want %q", tc.key, tc.sum, w.String(), tc.want)
		}
	}
}
