package repo

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// What systemd would run for a unit in a scratch root that no systemd
// manages: the unit file and its drop-ins found as systemd finds them, and
// ExecStart with the Environment and EnvironmentFile variables expanded.
// It covers what the kubelet units and kubeadm's drop-ins of the era use,
// no more (no specifiers, no templates, no Exec prefixes but "-").

// unitDirs are systemd's system unit directories, the first the strongest.
var unitDirs = []string{"/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"}

// execStart is a unit's effective command line in root: argv, the unit
// file and drop-ins read (paths inside root), in the order applied.
func execStart(root, unit string) (argv, files []string, err error) {
	if files, err = unitFiles(root, unit); err != nil {
		return nil, nil, err
	}
	var starts, envFiles []string
	env := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, files, err
		}
		for _, kv := range serviceSettings(data) {
			switch {
			case kv[0] == "ExecStart" && kv[1] == "":
				starts = nil
			case kv[0] == "ExecStart":
				starts = append(starts, kv[1])
			case kv[0] == "Environment":
				for _, a := range splitQuoted(kv[1]) {
					if k, v, ok := strings.Cut(a, "="); ok {
						env[k] = v
					}
				}
			case kv[0] == "EnvironmentFile" && kv[1] == "":
				envFiles = nil
			case kv[0] == "EnvironmentFile":
				envFiles = append(envFiles, kv[1])
			}
		}
	}
	if len(starts) != 1 {
		return nil, files, fmt.Errorf("%s has %d ExecStart lines after its drop-ins (%s), want 1", unit, len(starts), strings.Join(files, ", "))
	}
	// Files are read when the unit starts, after Environment=, each
	// overriding what came before.
	for _, ef := range envFiles {
		optional := strings.HasPrefix(ef, "-")
		ef = strings.TrimPrefix(ef, "-")
		data, err := os.ReadFile(filepath.Join(root, ef))
		if optional && os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, files, fmt.Errorf("EnvironmentFile %s: %w", ef, err)
		}
		maps.Copy(env, envFile(data))
	}
	return expand(strings.TrimPrefix(starts[0], "-"), env), files, nil
}

// unitFiles are the unit file and its drop-ins systemd reads, in order:
// the unit from the strongest directory holding it, then the drop-ins by
// file name across the directories, a name in a stronger directory
// hiding the same name in a weaker one.
func unitFiles(root, unit string) ([]string, error) {
	var files []string
	for _, d := range unitDirs {
		p := path.Join(d, unit)
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			files = append(files, p)
			break
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no %s in any of %s", unit, strings.Join(unitDirs, ", "))
	}
	dropins := map[string]string{}
	for i := len(unitDirs) - 1; i >= 0; i-- {
		d := path.Join(unitDirs[i], unit+".d")
		ents, _ := os.ReadDir(filepath.Join(root, d))
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".conf") {
				dropins[e.Name()] = path.Join(d, e.Name())
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(dropins)) {
		files = append(files, dropins[n])
	}
	return files, nil
}

// expand splits an ExecStart line into argv: $VAR into the words of its
// value, ${VAR} into one word.
func expand(line string, env map[string]string) []string {
	var argv []string
	for _, w := range splitQuoted(line) {
		switch {
		case strings.HasPrefix(w, "${") && strings.HasSuffix(w, "}"):
			argv = append(argv, env[w[2:len(w)-1]])
		case strings.HasPrefix(w, "$") && len(w) > 1:
			argv = append(argv, strings.Fields(env[w[1:]])...)
		default:
			argv = append(argv, w)
		}
	}
	return argv
}

// serviceSettings are the [Service] section's key=value lines, in order,
// continuation lines joined.
func serviceSettings(data []byte) [][2]string {
	var out [][2]string
	section, cont := "", ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cont != "" {
			line, cont = cont+" "+line, ""
		}
		if strings.HasSuffix(line, "\\") {
			cont = strings.TrimSuffix(line, "\\")
			continue
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = strings.Trim(line, "[]")
		case section == "Service":
			if k, v, ok := strings.Cut(line, "="); ok {
				out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
			}
		}
	}
	return out
}

// envFile parses an EnvironmentFile: KEY=VALUE lines, comments, values in
// single or double quotes.
func envFile(data []byte) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env[strings.TrimSpace(k)] = v
	}
	return env
}

// splitQuoted splits s at spaces outside double or single quotes, the
// quotes removed.
func splitQuoted(s string) []string {
	var out []string
	var cur strings.Builder
	var quote byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote, in = c, true
		case quote == 0 && (c == ' ' || c == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// enabledLink checks root's kubelet is enabled the way `systemctl enable`
// left it: the multi-user.target.wants link exists and names a unit file
// that is there.
func enabledLink(root, unit string) (string, error) {
	link := path.Join("/etc/systemd/system/multi-user.target.wants", unit)
	target, err := os.Readlink(filepath.Join(root, link))
	if err != nil {
		return "", fmt.Errorf("%s is not enabled: no %s (%v)", unit, link, err)
	}
	if !path.IsAbs(target) {
		target = path.Join(path.Dir(link), target)
	}
	if _, err := os.Stat(filepath.Join(root, target)); err != nil {
		return "", fmt.Errorf("%s -> %s: the enable link dangles, so the kubelet does not start at the next boot", link, target)
	}
	return target, nil
}
