package conformance

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The shim takes busybox 1.26's `timeout -t SECS PROG`, as alpine 3.6
// has it, and really bounds PROG (coreutils' timeout exits 124).
func TestAlpineTimeout(t *testing.T) {
	shim := filepath.Join(t.TempDir(), "timeout")
	if err := os.WriteFile(shim, []byte(alpineTimeout), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		out, err := exec.Command(shim, args...).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := run("-t", "1", "sleep", "5"); code != 124 {
		t.Errorf("timeout -t 1 sleep 5: exit %d (%s), want 124", code, out)
	}
	if code, out := run("-t", "5", "sh", "-c", "echo hostName"); code != 0 || out != "hostName\n" {
		t.Errorf("timeout -t 5 sh -c 'echo hostName': exit %d, %q", code, out)
	}
	// KILL reaches timeout's own process group, timeout included: the
	// shell reports 128+9 as it would in hostexec.
	out, _ := exec.Command("sh", "-c", shim+" -s KILL -t 1 sh -c \"trap '' TERM; sleep 5\"; echo $?").Output()
	if string(out) != "137\n" {
		t.Errorf("timeout -s KILL -t 1 (TERM ignored): %q, want 137", out)
	}
}

// copyTar keeps every entry but those the files replace, and adds the
// files as root-owned executables.
func TestCopyTarAddsFiles(t *testing.T) {
	var base bytes.Buffer
	tw := tar.NewWriter(&base)
	for name, body := range map[string]string{"./usr/bin/timeout": "coreutils", "./etc/os-release": "debian"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, body)
	}
	tw.Close()
	var out bytes.Buffer
	files := map[string]string{"/usr/local/bin/timeout": "shim", "/etc/os-release": "replaced"}
	if err := copyTar(tar.NewReader(&base), &out, files); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(&out)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if _, dup := got[filepath.Clean(hdr.Name)]; dup {
			t.Errorf("%s twice", hdr.Name)
		}
		got[filepath.Clean(hdr.Name)] = string(body)
		if files["/"+filepath.Clean(hdr.Name)] != "" && (hdr.Mode != 0o755 || hdr.Uname != "root") {
			t.Errorf("%s: mode %o owner %s", hdr.Name, hdr.Mode, hdr.Uname)
		}
	}
	want := map[string]string{"usr/bin/timeout": "coreutils", "etc/os-release": "replaced", "usr/local/bin/timeout": "shim"}
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
