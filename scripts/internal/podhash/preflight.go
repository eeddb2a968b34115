package podhash

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Row is one container of a preflight report.
type Row struct {
	Container      string `json:"container"`
	FromHash       uint64 `json:"fromHash"`
	VanillaHash    uint64 `json:"toVanillaHash"`
	VanillaVerdict string `json:"toVanilla"`
	PatchedHash    uint64 `json:"toPatchedHash"`
	PatchedVerdict string `json:"toPatched"`
}

// PodUID reports a static pod whose UID each release derives itself.
type PodUID struct {
	Pod         string `json:"pod"`
	From        string `json:"fromUID"`
	ToVanilla   string `json:"toVanillaUID"`
	ToPatched   string `json:"toPatchedUID"`
	PodReplaced bool   `json:"podReplacedByPatched"`
}

// Report is the outcome of a preflight.
type Report struct {
	From string   `json:"from"`
	To   string   `json:"to"`
	Rows []Row    `json:"containers"`
	UIDs []PodUID `json:"staticPodUIDs,omitempty"`
	// Recreating counts the containers the patched TO would recreate
	// (a replaced pod counts all of its containers).
	Recreating int `json:"patchedRecreates"`
}

const (
	kept      = "kept"
	recreated = "recreated"
)

// Preflight compares what FROM wrote with what TO vanilla and TO patched
// accept. from, vanilla and patched are the helpers' results on the same
// pods file, the latter two run with FROM's hashes as stored hashes.
func Preflight(fromName, toName string, from, vanilla, patched []Result) (*Report, error) {
	if len(from) != len(vanilla) || len(from) != len(patched) {
		return nil, fmt.Errorf("the releases disagree on the containers in the file (%d, %d, %d)", len(from), len(vanilla), len(patched))
	}
	rep := &Report{From: fromName, To: toName}
	replaced := map[string]bool{}
	seen := map[string]bool{}
	for i := range from {
		f, v, p := from[i], vanilla[i], patched[i]
		if f.Key() != v.Key() || f.Key() != p.Key() {
			return nil, fmt.Errorf("container %d: %s / %s / %s", i, f.Key(), v.Key(), p.Key())
		}
		if f.UIDDerived && !seen[f.Pod] {
			seen[f.Pod] = true
			u := PodUID{Pod: f.Pod, From: f.UID, ToVanilla: v.UID, ToPatched: p.UID, PodReplaced: f.UID != p.UID}
			rep.UIDs = append(rep.UIDs, u)
			replaced[f.Pod] = u.PodReplaced
		}
		row := Row{Container: f.Key(), FromHash: f.Hash, VanillaHash: v.Hash, VanillaVerdict: verdict(v, false), PatchedHash: p.Hash, PatchedVerdict: verdict(p, replaced[f.Pod])}
		if f.UIDDerived && f.UID != v.UID {
			row.VanillaVerdict = recreated + " (pod replaced)"
		}
		if row.PatchedVerdict != kept {
			rep.Recreating++
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

func verdict(r Result, podReplaced bool) string {
	switch {
	case podReplaced:
		return recreated + " (pod replaced)"
	case r.Accepted != nil && *r.Accepted:
		return kept
	default:
		return recreated
	}
}

// WriteTable renders the report for people.
func (r *Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CONTAINER\tFROM %s WRITES\tTO %s VANILLA\t\tTO %s PATCHED\t\n", r.From, r.To, r.To)
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t\n", row.Container, row.FromHash, row.VanillaHash, row.VanillaVerdict, row.PatchedHash, row.PatchedVerdict)
	}
	tw.Flush()
	if len(r.UIDs) > 0 {
		fmt.Fprintln(w, "\nPods without metadata.uid (static pods: each release derives the UID itself):")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "POD\tFROM %s UID\tTO %s VANILLA UID\tTO %s PATCHED UID\t\n", r.From, r.To, r.To)
		for _, u := range r.UIDs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", u.Pod, u.From, u.ToVanilla, u.ToPatched)
		}
		tw.Flush()
		for _, u := range r.UIDs {
			if u.PodReplaced {
				fmt.Fprintf(w, "%s: the UID differs, so the whole pod is replaced (pin metadata.uid in the manifest to keep it)\n", u.Pod)
			}
		}
	}
	if r.Recreating == 0 {
		fmt.Fprintf(w, "\nOK: the patched %s recreates nothing.\n", r.To)
	} else {
		fmt.Fprintf(w, "\nThe patched %s would recreate %d containers.\n", r.To, r.Recreating)
	}
}

// WriteJSON renders the report for machines.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
