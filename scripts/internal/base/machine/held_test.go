package machine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHeldNamesWhatASuiteLeft runs a process from a directory under the
// recorded one and mounts a tmpfs there, as an engine or kubelet a suite
// forgot would: the check must name both, and nothing once they are gone.
func TestHeldNamesWhatASuiteLeft(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (mount): make test runs as root")
	}
	dir := t.TempDir()
	before := &State{}
	if err := before.ReadHeld("/proc", dir); err != nil {
		t.Fatal(err)
	}
	if len(before.Processes)+len(before.Mounts) != 0 {
		t.Fatalf("a new directory holds %v %v", before.Processes, before.Mounts)
	}

	work, mnt := filepath.Join(dir, "engine"), filepath.Join(dir, "mnt with space")
	for _, d := range []string{work, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sleep := exec.Command("sleep", "300")
	sleep.Dir = work
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	if out, err := exec.Command("mount", "-t", "tmpfs", "held-test", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })

	after := &State{}
	if err := after.ReadHeld("/proc", dir); err != nil {
		t.Fatal(err)
	}
	got := keys(leftovers(before, after))
	if !strings.Contains(got, "process pid "+strconv.Itoa(sleep.Process.Pid)+" (sleep 300): appeared (still running under "+dir+")") ||
		!strings.Contains(got, "mount "+mnt+": appeared (still mounted)") {
		t.Errorf("leftovers: %s", got)
	}
	if slices.ContainsFunc(after.Processes, func(p Process) bool { return p.PID == os.Getpid() }) {
		t.Errorf("the checking process counted itself")
	}

	sleep.Process.Kill()
	sleep.Wait()
	if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v: %s", err, out)
	}
	again := &State{}
	if err := again.ReadHeld("/proc", dir); err != nil {
		t.Fatal(err)
	}
	if c := leftovers(before, again); len(c) != 0 {
		t.Errorf("after stopping and unmounting: %s", keys(c))
	}
	// What was there before the suite is not the suite's.
	if c := leftovers(after, after); len(c) != 0 {
		t.Errorf("a record differs from itself: %s", keys(c))
	}
}

// TestHeldSkipsItsCaller records the directory the test binary runs from:
// the caller (the toolchain under _output/bin, and make above it) is not
// a leftover.
func TestHeldSkipsItsCaller(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &State{}
	if err := s.ReadHeld("/proc", filepath.Dir(exe)); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(s.Processes, func(p Process) bool { return p.PID == os.Getpid() }) {
		t.Errorf("the recording process counted itself: %v", s.Processes)
	}
	if err := (&State{}).ReadHeld("/proc", "relative/_output"); err == nil {
		t.Errorf("a relative directory was accepted")
	}
}
