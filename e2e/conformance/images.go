// Package conformance runs upstream's node conformance suite
// (e2e_node.test, built by `make conformance-suite`) against a kubelet
// the e2e framework starts on the e2e's own engine: the images its specs
// run, built here under upstream's names, and the suite's results read
// back from its JUnit report.
package conformance

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"kubelet-toolchain/tools/debroot"
	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
)

// Image is one image the conformance specs run. There is no registry
// here: each is built under upstream's exact name and tag from what its
// Dockerfile in test/images says, the programs from the tree's own
// sources.
type Image struct {
	Ref string
	// Busybox lays Debian's busybox-static and its applets in, as
	// upstream's images FROM busybox have them.
	Busybox bool
	// Debian, when set, makes the image a Debian minbase root with these
	// packages, for images FROM a distribution whose programs the specs
	// run (nginx, curl): the same programs, from Debian's packages.
	Debian []string
	// Programs maps a path in the image to a Go program under the tree's
	// test/images, built static.
	Programs map[string]string
	// Dirs are directories to create (a Dockerfile's RUN mkdir).
	Dirs []string
	// Files are executables laid in last, by path: shims that give a
	// program the interface upstream's base image had.
	Files map[string]string
	// Changes are `docker import --change` lines (ENTRYPOINT, CMD, USER, EXPOSE).
	Changes []string
}

// alpineTimeout is busybox 1.26's timeout ("timeout [-t SECS] [-s SIG]
// PROG ARGS", SECS 10 by default), as hostexec's base, alpine 3.6, has
// it: the networking specs run `timeout -t 2 nc ...` and `timeout -t 15
// curl ...` in hostexec, and Debian's coreutils (and today's busybox)
// take the seconds as an operand instead.
const alpineTimeout = `#!/bin/sh
secs=10 sig=TERM
while getopts t:s: opt; do
  case $opt in t) secs=$OPTARG ;; s) sig=$OPTARG ;; *) exit 1 ;; esac
done
shift $((OPTIND - 1))
exec /usr/bin/timeout -s "$sig" "$secs" "$@"
`

func e2eImage(name, tag string) string {
	return "gcr.io/kubernetes-e2e-test-images/" + name + "-amd64:" + tag
}

// Images are the images of test/utils/image/manifest.go and the suite's
// whitelists that the [Conformance] specs run, built as each one's
// Dockerfile (1.9.11) builds it.
var Images = []Image{
	{Ref: "busybox:latest", Busybox: true, Changes: []string{`CMD ["sh"]`}},
	{Ref: e2eImage("mounttest", "1.0"), Programs: map[string]string{"/mounttest": "mounttest"},
		Changes: []string{`ENTRYPOINT ["/mounttest"]`}},
	// FROM mounttest, USER 1001.
	{Ref: e2eImage("mounttest-user", "1.0"), Programs: map[string]string{"/mounttest": "mounttest"},
		Changes: []string{`ENTRYPOINT ["/mounttest"]`, "USER 1001"}},
	{Ref: e2eImage("liveness", "1.0"), Programs: map[string]string{"/server": "liveness"}},
	{Ref: e2eImage("test-webserver", "1.0"), Programs: map[string]string{"/test-webserver": "test-webserver"},
		Changes: []string{`ENTRYPOINT ["/test-webserver"]`, "EXPOSE 80"}},
	{Ref: e2eImage("entrypoint-tester", "1.0"), Programs: map[string]string{"/ep": "entrypoint-tester", "/ep-2": "entrypoint-tester"},
		Changes: []string{`ENTRYPOINT ["/ep"]`, `CMD ["default", "arguments"]`, "EXPOSE 8080"}},
	{Ref: e2eImage("netexec", "1.0"), Busybox: true, Programs: map[string]string{"/netexec": "netexec"}, Dirs: []string{"/uploads"},
		Changes: []string{`ENTRYPOINT ["/netexec"]`, "EXPOSE 8080", "EXPOSE 8081"}},
	{Ref: e2eImage("serve-hostname", "1.0"), Busybox: true, Programs: map[string]string{"/serve_hostname": "serve-hostname"},
		Changes: []string{`ENTRYPOINT ["/serve_hostname"]`, "EXPOSE 9376"}},
	// FROM alpine:3.6 with curl, netcat-openbsd and iproute2 (the
	// lifecycle-hook specs' handlers curl from it).
	{Ref: e2eImage("hostexec", "1.1"), Debian: []string{"curl", "netcat-openbsd", "iproute2"},
		Files:   map[string]string{"/usr/local/bin/timeout": alpineTimeout},
		Changes: []string{`CMD ["/bin/sh", "-c", "while true; do sleep 1d; done"]`}},
	// nginx serving its default page on port 80.
	{Ref: "gcr.io/google-containers/nginx-slim-amd64:0.20", Debian: []string{"nginx-light"},
		Changes: []string{`CMD ["nginx", "-g", "daemon off;"]`, "EXPOSE 80"}},
}

// DebianSuite is the suite the Debian-based images are built from.
const DebianSuite = "bookworm"

// Busybox is Debian's static busybox (scripts/prereqs.sh installs it).
const Busybox = "/bin/busybox"

// srcLabel carries the hash of what an image was built from: an image
// whose label matches is not built again.
const srcLabel = "io.kubelet-toolchain.src"

// EnsureImages builds every image whose sources changed into the engine,
// its programs from the tree under gopath (the suite's prepared tree), the
// Debian roots cached under cache.
func EnsureImages(ctx context.Context, engine docker.Client, gopath, cache string, log io.Writer) error {
	scratch, err := os.MkdirTemp("", "conformance-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	busybox, err := readBusybox()
	if err != nil {
		return err
	}
	b := builder{engine: engine, gopath: gopath, scratch: scratch, cache: cache, busybox: busybox, log: log}
	for _, img := range Images {
		if err := b.ensure(ctx, img); err != nil {
			return fmt.Errorf("image %s: %w", img.Ref, err)
		}
	}
	return nil
}

// builder is what every image's build shares.
type builder struct {
	engine                 docker.Client
	gopath, scratch, cache string
	busybox                []byte // Debian's busybox-static, read once
	log                    io.Writer
}

func (b builder) ensure(ctx context.Context, img Image) error {
	engine, log := b.engine, b.log
	var root *debroot.Root
	rootKey := ""
	if len(img.Debian) > 0 {
		root = &debroot.Root{Suite: DebianSuite, Variant: "minbase", Packages: img.Debian}
		var err error
		if rootKey, err = root.Key(ctx, nil); err != nil {
			return err
		}
	}
	src, err := sourceHash(b.gopath, img, rootKey, b.busybox)
	if err != nil {
		return err
	}
	if got, err := engine.Run(ctx, "image", "inspect", "--format", `{{index .Config.Labels "`+srcLabel+`"}}`, img.Ref); err == nil && got == src {
		return nil
	}
	start := time.Now()
	if root != nil {
		tarPath := filepath.Join(b.cache, "debian-"+rootKey+".tar")
		if _, err := os.Stat(tarPath); err != nil {
			if err := root.Build(ctx, tarPath, func(f string, a ...any) { fmt.Fprintf(log, f+"\n", a...) }); err != nil {
				return err
			}
		}
		f, err := os.Open(tarPath)
		if err != nil {
			return err
		}
		defer f.Close()
		var tarball bytes.Buffer
		if err := copyTar(tar.NewReader(f), &tarball, img.Files); err != nil {
			return fmt.Errorf("%s: %w", tarPath, err)
		}
		if err := importImage(ctx, engine, &tarball, img, src); err != nil {
			return err
		}
		fmt.Fprintf(log, "built image %s (src %s) in %s\n", img.Ref, src, time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	rootfs := filepath.Join(b.scratch, strings.NewReplacer("/", "_", ":", "_").Replace(img.Ref))
	if err := os.MkdirAll(rootfs, 0o755); err != nil {
		return err
	}
	if img.Busybox {
		if err := layBusybox(ctx, rootfs, b.busybox); err != nil {
			return err
		}
	}
	for _, d := range append([]string{"/tmp"}, img.Dirs...) {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(rootfs, "tmp"), 0o1777); err != nil {
		return err
	}
	for path, prog := range img.Programs {
		if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Dir: b.gopath,
			Args: []string{"build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(rootfs, path), "k8s.io/kubernetes/test/images/" + prog},
			Env:  []string{"GOPATH=" + b.gopath, "GO111MODULE=off", "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0"}}); err != nil {
			return fmt.Errorf("building %s: %w", prog, err)
		}
	}
	var tarball bytes.Buffer
	if err := tarDir(rootfs, &tarball, img.Files); err != nil {
		return err
	}
	if err := importImage(ctx, engine, &tarball, img, src); err != nil {
		return err
	}
	fmt.Fprintf(log, "built image %s (src %s) in %s\n", img.Ref, src, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// importImage imports a root filesystem tarball as img, labelled with src.
func importImage(ctx context.Context, engine docker.Client, tarball io.Reader, img Image, src string) error {
	args := []string{"import"}
	for _, c := range append(img.Changes, "LABEL "+srcLabel+"="+src) {
		args = append(args, "--change", c)
	}
	_, err := engine.RunWith(ctx, tarball, 10*time.Minute, append(args, "-", img.Ref)...)
	return err
}

// readBusybox reads Debian's static busybox, refusing a dynamic one
// (an image has no libc for it).
func readBusybox() ([]byte, error) {
	data, err := os.ReadFile(Busybox)
	if err != nil {
		return nil, fmt.Errorf("%w (Debian's busybox-static: scripts/prereqs.sh installs it)", err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Busybox, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return nil, fmt.Errorf("%s is dynamically linked: install busybox-static", Busybox)
		}
	}
	return data, nil
}

// layBusybox puts busybox (data) at /bin/busybox with a symlink per
// applet (the paths `busybox --list-full` names), and the /etc files a
// shell expects.
func layBusybox(ctx context.Context, rootfs string, data []byte) error {
	if err := os.MkdirAll(filepath.Join(rootfs, "bin"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), data, 0o755); err != nil {
		return err
	}
	out, err := execx.Run(ctx, execx.Cmd{Name: Busybox, Args: []string{"--list-full"}})
	if err != nil {
		return err
	}
	for _, applet := range strings.Fields(string(out)) {
		link := filepath.Join(rootfs, applet)
		if applet == "bin/busybox" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		if err := os.Symlink("/bin/busybox", link); err != nil {
			return err
		}
	}
	for name, content := range map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n",
		"etc/group":  "root:x:0:\nnogroup:x:65534:\n",
	} {
		if err := os.MkdirAll(filepath.Join(rootfs, filepath.Dir(name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(rootfs, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, d := range []string{"root", "home", "var", "dev", "proc", "sys"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// sourceHash hashes what an image is built from: its definition, the
// busybox binary, the Debian root's key, and every file of its programs' directories.
func sourceHash(gopath string, img Image, rootKey string, busybox []byte) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%v\n%v\n%v\n%s\n%v\n", img.Ref, img.Busybox, img.Dirs, img.Changes, rootKey, img.Files)
	var paths []string
	for p := range img.Programs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	files := []string{}
	for _, p := range paths {
		dir := filepath.Join(gopath, "src", "k8s.io", "kubernetes", "test", "images", img.Programs[p])
		fmt.Fprintf(h, "%s=%s\n", p, img.Programs[p])
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	if img.Busybox {
		fmt.Fprintf(h, "busybox %d\n", len(busybox))
		h.Write(busybox)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// copyTar copies a tarball, then adds files (replacing entries of the
// same path).
func copyTar(tr *tar.Reader, w io.Writer, files map[string]string) error {
	tw := tar.NewWriter(w)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if _, replaced := files["/"+strings.TrimPrefix(path.Clean(hdr.Name), "./")]; replaced {
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	return addFiles(tw, files)
}

// addFiles writes files as root-owned executables, in path order, and
// closes the tarball.
func addFiles(tw *tar.Writer, files map[string]string) error {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Mode: 0o755,
			Size: int64(len(files[p])), Uname: "root", Gname: "root", ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, files[p]); err != nil {
			return err
		}
	}
	return tw.Close()
}

// tarDir writes dir as a tarball owned by root, as docker import wants
// it, with files added last.
func tarDir(dir string, w io.Writer, files map[string]string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = rel, 0, 0, "root", "root"
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(tw, f)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return addFiles(tw, files)
}
