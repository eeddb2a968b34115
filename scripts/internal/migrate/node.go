package migrate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"kubelet-toolchain/scripts/internal/base/dockershim"
	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
)

// A kubeadm node's files (kubeadm 1.11+: its drop-in reads the first two
// and the flags file of the distribution, ending in KUBELET_EXTRA_ARGS),
// as paths on the node.
const (
	KubeadmFlagsFile  = "/var/lib/kubelet/kubeadm-flags.env"
	KubeletConfigFile = "/var/lib/kubelet/config.yaml"
	// ShimUnit is written where no package installed the shim's unit.
	ShimUnit      = "/etc/systemd/system/" + dockershim.UnitName
	KubeletDropIn = "/etc/systemd/system/kubelet.service.d/20-dockershim.conf"
	// BackupDir keeps the files as they were before the first apply, and
	// which did not exist: every later run plans from them, and Back
	// restores them.
	BackupDir = "/var/lib/kubelet-toolchain/dockershim-exit"
	manifest  = "files.txt"
)

// Node is a node's root directory ("/" on the node itself).
type Node struct{ Root string }

func (n Node) path(p string) string { return filepath.Join(n.Root, p) }

// flagsDir is where the distribution keeps the kubelet's flags file
// (Debian's /etc/default/kubelet, RPM's /etc/sysconfig/kubelet), which
// kubeadm's drop-in reads and where the shim's goes beside it.
func (n Node) flagsDir() string {
	for _, d := range []string{"/etc/default", "/etc/sysconfig"} {
		if _, err := os.Stat(n.path(d + "/kubelet")); err == nil {
			return d
		}
	}
	if _, err := os.Stat(n.path("/etc/sysconfig")); err == nil {
		return "/etc/sysconfig"
	}
	return "/etc/default"
}

// Row is one flag of the node's kubelet and where it goes.
type Row struct {
	Flag   Flag
	From   string // the file it was read from
	Where  Where
	Reason string
}

// File is a file the switch writes, as a path on the node.
type File struct {
	Path string
	Data []byte
}

// Plan is what switching the node to release (minor To) writes.
type Plan struct {
	Release string
	Rows    []Row
	Files   []File
	// Replanned: a switch was applied before; the flags come from its
	// backups (the node's files before the first apply).
	Replanned bool
	// PackagedUnit is the shim's unit the dockershim package installed
	// ("" when there is none: the plan writes ShimUnit).
	PackagedUnit string
}

var envLine = regexp.MustCompile(`^(\w+)=(.*)$`)

// ReadVar returns the value of name in an environment file (quotes
// stripped), and whether it is set.
func ReadVar(data []byte, name string) (string, bool) {
	for _, l := range strings.Split(string(data), "\n") {
		if m := envLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil && m[1] == name {
			v := m[2]
			if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
				v = v[1 : len(v)-1]
			}
			return v, true
		}
	}
	return "", false
}

// setVar returns data with name's line replaced (or added) by
// name="value"; other lines are kept.
func setVar(data []byte, name, value string) []byte {
	line := fmt.Sprintf("%s=%q", name, value)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	for i, l := range lines {
		if m := envLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil && m[1] == name {
			lines[i] = line
			return []byte(strings.Join(lines, "\n") + "\n")
		}
	}
	return []byte(strings.Join(append(lines, line), "\n") + "\n")
}

// original reads a node file as it was before the first apply: from the
// backups when there are any (missing: it did not exist), else the node.
func (n Node) original(p string, backups map[string]bool) ([]byte, error) {
	if backups != nil {
		if !backups[p] {
			return nil, nil
		}
		return os.ReadFile(filepath.Join(n.path(BackupDir), p))
	}
	data, err := os.ReadFile(n.path(p))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// backups reads the manifest of a previous apply: each path it wrote and
// whether the node had it before (nil: never applied).
func (n Node) backups() (map[string]bool, error) {
	data, err := os.ReadFile(filepath.Join(n.path(BackupDir), manifest))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		state, p, ok := strings.Cut(l, " ")
		if !ok || (state != "existed" && state != "created") {
			return nil, fmt.Errorf("%s: unexpected line %q", filepath.Join(BackupDir, manifest), l)
		}
		m[p] = state == "existed"
	}
	return m, nil
}

// kubeletConfig is what the shim needs of the kubelet's config file
// (settings given as flags win, as in the kubelet).
type kubeletConfig struct {
	CgroupDriver                   string `json:"cgroupDriver"`
	HairpinMode                    string `json:"hairpinMode"`
	RuntimeRequestTimeout          string `json:"runtimeRequestTimeout"`
	StreamingConnectionIdleTimeout string `json:"streamingConnectionIdleTimeout"`
}

// PlanSwitch plans the switch of a node running kubelet 1.23 on its own
// dockershim to release (minor to, 24 or 25) on the shim. Every flag it
// cannot carry over is named in the error, and nothing is planned.
func (n Node) PlanSwitch(release string, to int) (*Plan, error) {
	if to < matrix.ShimFrom || to > 25 {
		return nil, fmt.Errorf("release %s: the switch leads from 1.23 to 1.24 or 1.25", release)
	}
	backups, err := n.backups()
	if err != nil {
		return nil, err
	}
	p := &Plan{Release: release, Replanned: backups != nil}
	flagsFile := n.flagsDir() + "/kubelet"
	shimFlagsFile := dockershim.FlagsFile(n.flagsDir())
	// The dockershim package's unit reads its flags file: the plan writes
	// that one, and no unit of its own that would hide the package's.
	for _, u := range dockershim.PackagedUnits {
		if data, err := os.ReadFile(n.path(u)); err == nil {
			p.PackagedUnit = u
			if f := dockershim.UnitFlagsFile(data); f != "" {
				shimFlagsFile = f
			}
			break
		}
	}
	sources := []struct{ file, name string }{{KubeadmFlagsFile, "KUBELET_KUBEADM_ARGS"}, {flagsFile, "KUBELET_EXTRA_ARGS"}}
	var refused []string
	shimArgs := []Flag{{Name: "container-runtime-endpoint", Value: dockershim.Endpoint, HasValue: true}}
	given := map[string]bool{}
	data := map[string][]byte{}
	kept := map[string][]Flag{}
	for _, s := range sources {
		d, err := n.original(s.file, backups)
		if err != nil {
			return nil, err
		}
		data[s.file] = d
		v, _ := ReadVar(d, s.name)
		fs, err := ParseFlags(v)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.file, s.name, err)
		}
		for _, f := range fs {
			where, why := Classify(f, to)
			p.Rows = append(p.Rows, Row{Flag: f, From: s.file, Where: where, Reason: why})
			switch where {
			case Refused:
				refused = append(refused, fmt.Sprintf("%s: %s", s.file, why))
			case Shim:
				shimArgs = append(shimArgs, f)
			case Both:
				shimArgs = append(shimArgs, f)
				kept[s.file] = append(kept[s.file], f)
			case Kubelet:
				kept[s.file] = append(kept[s.file], f)
			}
			given[f.Name] = true
		}
	}
	// Where this kubelet serves its dockershim: there the shim serves it.
	runtime, endpoint := "docker", dockershim.Endpoint
	for _, r := range p.Rows {
		switch r.Flag.Name {
		case "container-runtime":
			runtime = r.Flag.Value
		case "container-runtime-endpoint":
			endpoint = r.Flag.Value
		}
	}
	if runtime == "remote" && endpoint != dockershim.Endpoint {
		refused = append(refused, fmt.Sprintf("--container-runtime=remote --container-runtime-endpoint=%s: this kubelet runs on another runtime, not a dockershim", endpoint))
	}
	shimArgs[0].Value = endpoint
	if len(refused) > 0 {
		return nil, fmt.Errorf("cannot switch to %s, nothing written:\n  %s", release, strings.Join(refused, "\n  "))
	}
	// The kubelet's config file: what the shim must share with it.
	cfgData, err := n.original(KubeletConfigFile, nil)
	if err != nil {
		return nil, err
	}
	var cfg kubeletConfig
	if err := yaml.Unmarshal(cfgData, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", KubeletConfigFile, err)
	}
	for name, v := range map[string]string{"cgroup-driver": cfg.CgroupDriver, "hairpin-mode": cfg.HairpinMode,
		"runtime-request-timeout": cfg.RuntimeRequestTimeout, "streaming-connection-idle-timeout": cfg.StreamingConnectionIdleTimeout} {
		if v != "" && !given[name] {
			shimArgs = append(shimArgs, Flag{Name: name, Value: v, HasValue: true})
			p.Rows = append(p.Rows, Row{Flag: Flag{Name: name, Value: v, HasValue: true}, From: KubeletConfigFile, Where: Both,
				Reason: "the kubelet keeps it in its config file; the shim takes it as a flag"})
		}
	}
	sort.SliceStable(shimArgs[1:], func(i, j int) bool { return shimArgs[1+i].Name < shimArgs[1+j].Name })

	runtimeFlags := []Flag{{Name: "container-runtime", Value: "remote", HasValue: true}, {Name: "container-runtime-endpoint", Value: endpoint, HasValue: true}}
	p.Files = []File{
		{KubeadmFlagsFile, setVar(data[KubeadmFlagsFile], "KUBELET_KUBEADM_ARGS", Join(append(kept[KubeadmFlagsFile], runtimeFlags...)))},
	}
	if data[flagsFile] != nil {
		p.Files = append(p.Files, File{flagsFile, setVar(data[flagsFile], "KUBELET_EXTRA_ARGS", Join(kept[flagsFile]))})
	}
	p.Files = append(p.Files, File{shimFlagsFile, dockershim.FlagsFileData(Join(shimArgs))})
	if p.PackagedUnit == "" {
		p.Files = append(p.Files, File{ShimUnit, []byte(dockershim.Unit(shimFlagsFile))})
	}
	p.Files = append(p.Files,
		File{KubeletDropIn, []byte("# The kubelet's runtime is the dockershim (written by toolchain switch-node).\n[Unit]\nWants=" + dockershim.UnitName + "\nAfter=" + dockershim.UnitName + "\n")},
	)
	return p, nil
}

// Apply writes the plan's files, each replaced whole. The first apply
// keeps every file it replaces under BackupDir (and which it creates),
// before writing any; a later apply keeps those backups.
func (n Node) Apply(p *Plan) error {
	if !p.Replanned {
		var lines []string
		for _, f := range p.Files {
			data, err := os.ReadFile(n.path(f.Path))
			switch {
			case errors.Is(err, os.ErrNotExist):
				lines = append(lines, "created "+f.Path)
			case err != nil:
				return err
			default:
				backup := filepath.Join(n.path(BackupDir), f.Path)
				if err := os.MkdirAll(filepath.Dir(backup), 0o755); err != nil {
					return err
				}
				if err := fsutil.WriteFileAtomic(backup, data, 0o644); err != nil {
					return fmt.Errorf("backing up %s: %w", f.Path, err)
				}
				lines = append(lines, "existed "+f.Path)
			}
		}
		// Last: its presence says the backups are complete.
		if err := os.MkdirAll(n.path(BackupDir), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(filepath.Join(n.path(BackupDir), manifest), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	for _, f := range p.Files {
		if err := os.MkdirAll(filepath.Dir(n.path(f.Path)), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(n.path(f.Path), f.Data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	return nil
}

// Back puts every file the switch wrote back as it was (removing those it
// created) and drops the backups. It says what it did.
func (n Node) Back() ([]string, error) {
	backups, err := n.backups()
	if err != nil {
		return nil, err
	}
	if backups == nil {
		return nil, fmt.Errorf("no switch to undo: %s has no %s", BackupDir, manifest)
	}
	var done []string
	paths := make([]string, 0, len(backups))
	for p := range backups {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if backups[p] {
			data, err := os.ReadFile(filepath.Join(n.path(BackupDir), p))
			if err != nil {
				return done, err
			}
			if err := fsutil.WriteFileAtomic(n.path(p), data, 0o644); err != nil {
				return done, err
			}
			done = append(done, "restored "+p)
		} else {
			if err := os.Remove(n.path(p)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return done, err
			}
			done = append(done, "removed "+p)
		}
	}
	return done, os.RemoveAll(n.path(BackupDir))
}
