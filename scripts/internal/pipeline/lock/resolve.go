package lock

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"kubelet-toolchain/scripts/internal/pipeline/godeps"
	"kubelet-toolchain/scripts/internal/pipeline/gomod"
)

// Candidate is a module@version proposed for a repository root.
type Candidate struct {
	Root         string `json:"root"`
	Rev          string `json:"rev"`
	Module       string `json:"module"`
	Version      string `json:"version"`
	How          string `json:"how"`
	WholeModule  bool   `json:"recursive"`
	Substitution string `json:"substitution,omitempty"`
}

// LoadSeed reads candidate pins found by hand: a JSON list of
// {root, rev, module, version, how, recursive, substitution}; `how`
// "override" marks a substitution (its reason from `substitution`, or the
// nearest-served-version one), "missing..." a root with no served version.
// A seed's pin wins over the committed lock's.
func LoadSeed(path string) ([]Candidate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c []Candidate
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Downloader fetches modules; gomod.Download in production.
type Downloader func(ctx context.Context, ids ...string) ([]gomod.Module, error)

// Resolve builds a Godeps-era lock for repos. Candidates come, in order of
// preference, from seed, prev (the committed lock), siblings (the other
// releases' locks: a revision one of them pins is pinned the same way),
// and the Godeps comment when it is a plain release tag. Every chosen
// module is downloaded, which verifies it against the checksum database,
// and its h1: sum recorded.
func Resolve(ctx context.Context, release string, repos []godeps.Repo, prev *Lock, siblings []*Lock, seed []Candidate, dl Downloader) (*Lock, error) {
	prevByRoot := map[string]Module{}
	prevMissing := map[string]Missing{}
	if prev != nil {
		for _, m := range prev.Modules {
			prevByRoot[m.Root] = m
		}
		for _, m := range prev.Missing {
			prevMissing[m.Root] = m
		}
	}
	seedByRoot := map[string]Candidate{}
	for _, c := range seed {
		seedByRoot[c.Root] = c
	}
	type rootRev struct{ root, rev string }
	siblingPins := map[rootRev][]Candidate{}
	siblingMissing := map[rootRev]bool{}
	for _, sib := range siblings {
		for _, m := range sib.Modules {
			if !m.Extra {
				k := rootRev{m.Root, m.Rev}
				siblingPins[k] = append(siblingPins[k], Candidate{Module: m.Module, Version: m.Version,
					WholeModule: m.WholeModule, Substitution: m.Substitution, How: "lock " + sib.Release})
			}
		}
		for _, m := range sib.Missing {
			siblingMissing[rootRev{m.Root, m.Rev}] = true
		}
	}

	type pending struct {
		repo  godeps.Repo
		cands []Candidate
	}
	var work []pending
	for _, r := range repos {
		var cands []Candidate
		// A seed is what this run was asked to change, so it goes before the
		// committed lock: an override can replace even a served exact pin
		// (with its own reason, e.g. a run-time crash under the pinned Go).
		if s, ok := seedByRoot[r.Root]; ok && s.Rev == r.Rev && s.Version != "" {
			switch {
			case s.How != "override":
				s.Substitution = ""
			case strings.TrimSpace(s.Substitution) == "":
				s.Substitution = fmt.Sprintf("revision %s is not served by the module proxy; %s is the nearest version that is", short(r.Rev), s.Version)
			}
			cands = append(cands, s)
		}
		if p, ok := prevByRoot[r.Root]; ok && p.Rev == r.Rev {
			cands = append(cands, Candidate{Module: p.Module, Version: p.Version, WholeModule: p.WholeModule, Substitution: p.Substitution, How: "lock"})
		}
		// Siblings only for what the committed lock does not decide: a
		// root it records as missing stays missing.
		if m, ok := prevMissing[r.Root]; !ok || m.Rev != r.Rev {
			cands = append(cands, siblingPins[rootRev{r.Root, r.Rev}]...)
		}
		if tag := plainTag(r.Comment); tag != "" {
			cands = append(cands, Candidate{Module: r.Root, Version: tag, How: "tag"}, Candidate{Module: r.Root, Version: tag + "+incompatible", How: "tag"})
		}
		work = append(work, pending{r, cands})
	}

	// Download every candidate in one go command; failures are per module.
	var ids []string
	seen := map[string]bool{}
	for _, w := range work {
		for _, c := range w.cands {
			id := c.Module + "@" + c.Version
			if !seen[id] && module.Check(c.Module, c.Version) == nil {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	extras := extraCandidates(prev, seed)
	for _, c := range extras {
		if id := c.Module + "@" + c.Version; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	got := map[string]gomod.Module{}
	mods, err := dl(ctx, ids...)
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		got[m.ID()] = m
	}

	l := &Lock{Release: release, Era: "godeps"}
	var unresolved []string
	for _, w := range work {
		var chosen *Module
		var errs []string
		for _, c := range w.cands {
			m, ok := got[c.Module+"@"+c.Version]
			if !ok || m.Error != "" {
				errs = append(errs, fmt.Sprintf("%s@%s: %s", c.Module, c.Version, firstLine(m.Error)))
				continue
			}
			chosen = &Module{Root: w.repo.Root, Rev: w.repo.Rev, Comment: w.repo.Comment, Module: c.Module, Version: c.Version,
				Sum: m.Sum, Packages: w.repo.Packages, WholeModule: c.WholeModule, Substitution: c.Substitution}
			if chosen.Exact() {
				chosen.Substitution = ""
			} else if chosen.Substitution == "" {
				chosen.Substitution = fmt.Sprintf("revision %s is not served by the module proxy; %s is the nearest version that is", short(w.repo.Rev), c.Version)
			}
			break
		}
		switch {
		case chosen != nil:
			l.Modules = append(l.Modules, *chosen)
		case prevMissing[w.repo.Root].Rev == w.repo.Rev && prevMissing[w.repo.Root].Reason != "":
			l.Missing = append(l.Missing, prevMissing[w.repo.Root])
		case isSeedMissing(seedByRoot[w.repo.Root], w.repo.Rev) || siblingMissing[rootRev{w.repo.Root, w.repo.Rev}]:
			l.Missing = append(l.Missing, Missing{Root: w.repo.Root, Rev: w.repo.Rev,
				Reason: "no version of this revision is served by the module proxy; cmd/kubelet does not import it (its build would fail if it did)"})
		default:
			unresolved = append(unresolved, fmt.Sprintf("%s@%s (%s): %s", w.repo.Root, short(w.repo.Rev), w.repo.Comment, strings.Join(errs, "; ")))
		}
	}
	for _, c := range extras {
		m := got[c.Module+"@"+c.Version]
		if m.Error != "" {
			unresolved = append(unresolved, fmt.Sprintf("extra %s@%s: %s", c.Module, c.Version, firstLine(m.Error)))
			continue
		}
		l.Modules = append(l.Modules, Module{Root: c.Root, Module: c.Module, Version: c.Version, Sum: m.Sum,
			WholeModule: true, Extra: true, Substitution: c.Substitution})
	}
	if len(unresolved) > 0 {
		return nil, fmt.Errorf("%d repositories have no module version served by the proxy; add a candidate (a substitution with its reason) to the lock or a seed file:\n  %s",
			len(unresolved), strings.Join(unresolved, "\n  "))
	}
	sort.Slice(l.Modules, func(i, j int) bool { return l.Modules[i].Root < l.Modules[j].Root })
	return l, l.Validate()
}

func extraCandidates(prev *Lock, seed []Candidate) []Candidate {
	var out []Candidate
	have := map[string]bool{}
	if prev != nil {
		for _, m := range prev.Modules {
			if m.Extra {
				have[m.Root] = true
				out = append(out, Candidate{Root: m.Root, Module: m.Module, Version: m.Version, Substitution: m.Substitution})
			}
		}
	}
	for _, c := range seed {
		if c.How == "extra" && !have[c.Root] {
			c.Substitution = "not listed in Godeps.json; a substituted module imports it"
			out = append(out, c)
		}
	}
	return out
}

func isSeedMissing(c Candidate, rev string) bool {
	return c.Rev == rev && strings.HasPrefix(c.How, "missing")
}

// plainTag returns the Godeps comment if it names a release tag exactly
// (git describe output without the -N-gHASH suffix).
func plainTag(comment string) string {
	if semver.IsValid(comment) && !strings.Contains(comment, "-g") && semver.Build(comment) == "" {
		return comment
	}
	return ""
}

func firstLine(s string) string {
	if s == "" {
		return "not downloaded"
	}
	s, _, _ = strings.Cut(s, "\n")
	return s
}
