package quilt

import (
	"path"
	"strings"
)

// Subject is the patch's one-line summary: its Subject header without the
// "[PATCH]" tag, continuation lines joined.
func (p Patch) Subject() string {
	header, _, _ := strings.Cut(string(p.Data), "\n\n")
	var out []string
	in := false
	for _, l := range strings.Split(header, "\n") {
		switch {
		case strings.HasPrefix(l, "Subject:"):
			in = true
			l = strings.TrimSpace(strings.TrimPrefix(l, "Subject:"))
			if rest, ok := strings.CutPrefix(l, "["); ok {
				if _, after, ok := strings.Cut(rest, "]"); ok {
					l = strings.TrimSpace(after)
				}
			}
			out = append(out, l)
		case in && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")):
			out = append(out, strings.TrimSpace(l))
		default:
			in = false
		}
	}
	return strings.Join(out, " ")
}

// Summary is the patch's changelog line: its number in the series and
// its subject ("0002 cadvisor: put a deadline on ..."), without the
// "<series>: " an added-file patch's subject starts with.
func (p Patch) Summary() string {
	num, _, _ := strings.Cut(path.Base(p.Name), "-")
	return num + " " + strings.TrimPrefix(p.Subject(), p.Series+": ")
}
