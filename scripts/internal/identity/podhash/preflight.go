package podhash

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// Row is one container of a preflight report.
type Row struct {
	Container string `json:"container"`
	Init      bool   `json:"init,omitempty"`
	// FromHash is what FROM writes (0 when FROM rejects the pod or, in node
	// mode, when no FROM is given).
	FromHash uint64 `json:"fromHash"`
	// StoredHash is the hash label of the running container (node mode).
	StoredHash     *uint64 `json:"storedHash,omitempty"`
	VanillaHash    uint64  `json:"toVanillaHash"`
	VanillaVerdict string  `json:"toVanilla"`
	PatchedHash    uint64  `json:"toPatchedHash"`
	PatchedVerdict string  `json:"toPatched"`
	// VanillaOutcome and PatchedOutcome say what the verdicts predict for
	// the container's pod, typed (Outcome*); "" predicts nothing (an init
	// container, one not running).
	VanillaOutcome string `json:"toVanillaOutcome,omitempty"`
	PatchedOutcome string `json:"toPatchedOutcome,omitempty"`
	// Rejected says which release's kubelet refuses the pod, and why.
	Rejected string `json:"rejected,omitempty"`
	// NotEnforced are spec fields FROM dropped (so the running container
	// lacks them) that the patched TO keeps the container without applying.
	NotEnforced []string `json:"notEnforced,omitempty"`
}

// PodUID reports a static pod whose UID each release derives itself.
type PodUID struct {
	Pod string `json:"pod"`
	// From is the UID FROM's official binary derives; FromNewerGo the one
	// FROM built by Go >= 1.9 derives, where it differs.
	From        string `json:"fromUID"`
	FromNewerGo string `json:"fromUIDNewerGo,omitempty"`
	// Running is the UID the node's containers carry (node mode). The
	// verdicts follow from it, else from From.
	Running   string `json:"runningUID,omitempty"`
	ToVanilla string `json:"toVanillaUID"`
	ToPatched string `json:"toPatchedUID"`
	// Caveat says why From may not be what the node's official binary
	// derived (it depends on the node or on when the kubelet started).
	Caveat string `json:"caveat,omitempty"`
	// VanillaReplaced: TO vanilla derives another UID and replaces the pod.
	VanillaReplaced bool `json:"vanillaPodReplaced"`
	PodReplaced     bool `json:"podReplacedByPatched"`
}

// keeps says whether a TO build keeps a pod running under uid.
func keeps(t Result, uid string) bool {
	if len(t.UIDsKept) == 0 {
		return t.UID == uid
	}
	for _, u := range t.UIDsKept {
		if u == uid {
			return true
		}
	}
	return false
}

// Report is the outcome of a preflight.
type Report struct {
	From        string `json:"from"`
	FromVariant string `json:"fromVariant,omitempty"`
	To          string `json:"to"`
	// Source is how the pods reach the kubelet: api or static.
	Source string `json:"source"`
	// Node is the Docker endpoint whose containers' stored hashes were read.
	Node string   `json:"node,omitempty"`
	Rows []Row    `json:"containers"`
	UIDs []PodUID `json:"staticPodUIDs,omitempty"`
	// Unmatched are kubelet-made containers on the node that no pod of the
	// file describes (namespace/pod/container).
	Unmatched []string `json:"unmatchedNodeContainers,omitempty"`
	// Hung are the node's containers whose inspect did not answer within
	// InspectBound, with what TO's kubelets would do on them.
	Hung []HungContainer `json:"hungContainers,omitempty"`
	// Orphans are the node's containers whose sandbox is gone, with what
	// TO's kubelets would do on them.
	Orphans []OrphanContainer `json:"orphanedContainers,omitempty"`
	// Recreating counts the containers the patched TO would recreate
	// (a replaced pod counts all of its containers; init containers never).
	Recreating int `json:"patchedRecreates"`
	// Rejecting counts the containers of pods the patched TO would refuse.
	Rejecting int `json:"patchedRejects"`
}

// HungContainer is a container whose inspect does not answer: the
// docker-hang report's.
type HungContainer struct {
	Container string `json:"container"` // namespace/pod/container
	ID        string `json:"id"`
	Vanilla   string `json:"vanilla"`
	Patched   string `json:"patched"`
}

// What TO's kubelets do when restarted on a hung container. No release
// 1.7..1.23 bounds cadvisor's inspect; every patched one does (the
// inspect-deadline series). From 1.24 the kubelet has no cadvisor Docker
// factory, and its PLEG counts a relist healthy once the runtime listed
// the pods, before it reads their status: the node is Ready either way,
// and the shim's variant decides how long each relist reading the pod
// waits on the inspect. Each prediction starts with HungReady or
// HungNotReady, which the rehearsal judges.
const (
	HungReady    = "node Ready"
	HungNotReady = "node stays NotReady"

	hungVanilla     = HungNotReady + ": the restarted kubelet's runtime start waits on cadvisor's inspect, which has no deadline, until the container answers"
	hungPatched     = HungReady + ": the inspects give up at their 10 s deadline; the container is kept"
	hungVanillaShim = HungReady + " (1.24+ has no cadvisor Docker factory); every PLEG relist that reads its pod waits on dockershim's status inspect for the 2-minute request timeout, so every pod change on the node waits too; the container is kept"
	hungPatchedShim = HungReady + ": dockershim's status inspects give up at their 10 s deadline (the patched shim), relists go on; the container is kept"
)

// OrphanContainer is a container whose sandbox container is gone: the
// orphan report's.
type OrphanContainer struct {
	Container string `json:"container"` // namespace/pod/container
	ID        string `json:"id"`
	SandboxID string `json:"sandboxID"`
	Vanilla   string `json:"vanilla"`
	Patched   string `json:"patched"`
}

// OrphanExit is what the kubelets that exit on an orphaned container log
// last (the field report's line).
const OrphanExit = "no PodsandBox found with Id"

// orphanExits says whether vanilla release exits at start on a container
// whose sandbox is gone: buildContainerMapFromRuntime (1.18) stops the
// kubelet on it until kubernetes#108325 (1.24; 1.23.14 by #113354). The
// patched 1.18..1.22 carry the tolerant map (container-map-orphan).
func orphanExits(release string) bool {
	v, _ := matrix.ParseVersion(release)
	return v.Major == 1 && (v.Minor >= 18 && v.Minor <= 22 || v.Minor == 23 && v.Patch < 14)
}

func orphanVerdict(release, sandbox string, exits bool) string {
	if exits {
		return fmt.Sprintf("the kubelet exits at start: %q %s (buildContainerMapFromRuntime; unless the sandbox's checkpoint is still there)", OrphanExit, sandbox)
	}
	return "the kubelet starts, and kills and removes the container (its pod is gone)"
}

// Verdicts. A verdict may carry a detail after ": " or " (".
const (
	kept        = "kept"
	recreated   = "recreated"
	notCompared = "not compared (init container)"
	notRunning  = "not running on the node"
	notEnforced = "kept, spec not enforced"
	rejectedBy  = "rejected by"
	startedByTo = "started (FROM rejects the pod)"
	podReplaced = recreated + " (pod replaced)"
)

// Outcomes a verdict predicts for the container's pod, as the rehearsal
// judges pods (package verdict has the same names).
const (
	OutcomeKept      = "kept"
	OutcomeRecreated = "recreated"
	OutcomeReplaced  = "replaced"
	OutcomeRejected  = "rejected"
)

// Inputs are the helpers' results on the same pods, for one preflight.
type Inputs struct {
	From, FromVariant, To, Source string
	// FromResults are FROM's hashes; nil in node mode without FROM.
	FromResults []Result
	// Vanilla and Patched are TO's results, run with the stored hashes
	// (FROM's, or the node's) so each reports what it accepts.
	Vanilla, Patched []Result
	// Node, in node mode, is what the running containers carry.
	Node *NodeState
}

// Preflight compares what FROM wrote (or the node stores) with what TO
// vanilla and TO patched accept, the way the kubelet reaches its verdicts.
func Preflight(in Inputs) (*Report, error) {
	n := len(in.Vanilla)
	if len(in.Patched) != n || (in.FromResults != nil && len(in.FromResults) != n) {
		return nil, fmt.Errorf("the releases disagree on the containers in the file (%d, %d, %d)", len(in.FromResults), n, len(in.Patched))
	}
	rep := &Report{From: in.From, FromVariant: in.FromVariant, To: in.To, Source: in.Source}
	if in.Node != nil {
		rep.Node = in.Node.Endpoint
	}
	replacedV, replacedP := map[string]bool{}, map[string]bool{}
	seen := map[string]bool{}
	for i := range in.Vanilla {
		v, p := in.Vanilla[i], in.Patched[i]
		var f *Result
		if in.FromResults != nil {
			f = &in.FromResults[i]
		}
		if v.Key() != p.Key() || (f != nil && f.Key() != v.Key()) {
			return nil, fmt.Errorf("container %d: %s / %s", i, v.Key(), p.Key())
		}
		row := Row{Container: v.Key(), Init: v.Init, VanillaHash: v.Hash, PatchedHash: p.Hash}
		var running *NodeContainer
		if in.Node != nil {
			running = in.Node.Match(v)
			if running != nil {
				h := running.Hash
				row.StoredHash = &h
			}
		}
		// The UID the pod runs under: the node's label, else FROM's
		// official derivation (operators switch from official binaries).
		if !seen[v.Pod] && (v.UIDDerived || p.UIDDerived) {
			u := PodUID{Pod: v.Pod, ToVanilla: v.UID, ToPatched: p.UID, Caveat: p.UIDCaveat}
			if f != nil && f.Rejected == "" {
				u.From, u.FromNewerGo = f.UID, f.UIDNewerGo
				u.Caveat = firstOf(f.UIDCaveat, u.Caveat)
			}
			if running != nil {
				u.Running = running.PodUID
			}
			if runs := firstOf(u.Running, u.From); runs != "" {
				seen[v.Pod] = true
				u.PodReplaced, u.VanillaReplaced = !keeps(p, runs), !keeps(v, runs)
				rep.UIDs = append(rep.UIDs, u)
				replacedV[v.Pod], replacedP[v.Pod] = u.VanillaReplaced, u.PodReplaced
			}
		}
		if f != nil {
			row.FromHash = f.Hash
		}
		var fromRejected string
		if f != nil && f.Rejected != "" {
			fromRejected = f.Rejected
			row.Rejected = fmt.Sprintf("%s %s: %s", rejectedBy, in.From, f.Rejected)
		}
		if p.Rejected != "" {
			row.Rejected = fmt.Sprintf("%s %s: %s", rejectedBy, in.To, p.Rejected)
		}
		judge := func(t Result, replaced bool) (verdict, outcome string) {
			switch {
			case t.Rejected != "":
				return fmt.Sprintf("%s %s: %s", rejectedBy, in.To, t.Rejected), OutcomeRejected
			case t.Init:
				return notCompared, ""
			case in.Node != nil && running == nil:
				return notRunning, ""
			case in.Node == nil && fromRejected != "":
				return startedByTo, ""
			case replaced:
				return podReplaced, OutcomeReplaced
			case t.Accepted != nil && *t.Accepted:
				return kept, OutcomeKept
			default:
				return recreated, OutcomeRecreated
			}
		}
		row.VanillaVerdict, row.VanillaOutcome = judge(v, replacedV[v.Pod])
		row.PatchedVerdict, row.PatchedOutcome = judge(p, replacedP[v.Pod])
		if row.PatchedVerdict == kept && f != nil {
			if missing := lacking(f.Dropped, p.Dropped); len(missing) > 0 {
				row.NotEnforced = missing
				row.PatchedVerdict = notEnforced + ": " + strings.Join(missing, ", ")
			}
		}
		switch {
		case strings.HasPrefix(row.PatchedVerdict, recreated):
			rep.Recreating++
		case strings.HasPrefix(row.PatchedVerdict, rejectedBy):
			rep.Rejecting++
		}
		rep.Rows = append(rep.Rows, row)
	}
	if in.Node != nil {
		rep.Unmatched = in.Node.Unmatched()
		for _, c := range in.Node.Hung {
			h := HungContainer{Container: c.Key(), ID: c.ID, Vanilla: hungVanilla, Patched: hungPatched}
			if v, _ := matrix.ParseVersion(in.To); v.Minor >= matrix.ShimFrom {
				h.Vanilla, h.Patched = hungVanillaShim, hungPatchedShim
			}
			rep.Hung = append(rep.Hung, h)
		}
		for _, c := range in.Node.Orphans {
			rep.Orphans = append(rep.Orphans, OrphanContainer{Container: c.Key(), ID: c.ID, SandboxID: c.SandboxID,
				Vanilla: orphanVerdict(in.To, c.SandboxID, orphanExits(in.To)), Patched: orphanVerdict(in.To, c.SandboxID, false)})
		}
	}
	return rep, nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// lacking returns the fields FROM dropped that TO knows: the running
// container was made without them, and a kept container stays so.
func lacking(fromDropped, toDropped []string) []string {
	to := map[string]bool{}
	for _, f := range toDropped {
		to[f] = true
	}
	var out []string
	for _, f := range fromDropped {
		if !to[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// Failed reports whether the patched TO would recreate or refuse anything.
func (r *Report) Failed() bool { return r.Recreating > 0 || r.Rejecting > 0 }

// WriteTable renders the report for people.
func (r *Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fromCol := fmt.Sprintf("FROM %s WRITES", r.From)
	if r.Node != "" {
		fromCol = "NODE STORES"
	}
	fmt.Fprintf(tw, "CONTAINER\t%s\tTO %s VANILLA\t\tTO %s PATCHED\t\n", fromCol, r.To, r.To)
	for _, row := range r.Rows {
		from := fmt.Sprint(row.FromHash)
		switch {
		case row.StoredHash != nil:
			from = fmt.Sprint(*row.StoredHash)
		case r.Node != "":
			from = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t\n", row.Container, from, row.VanillaHash, row.VanillaVerdict, row.PatchedHash, row.PatchedVerdict)
	}
	tw.Flush()
	for _, row := range r.Rows {
		if row.Rejected != "" && !strings.Contains(row.PatchedVerdict, row.Rejected) {
			fmt.Fprintf(w, "%s: %s\n", row.Container, row.Rejected)
		}
	}
	if len(r.UIDs) > 0 {
		fmt.Fprintln(w, "\nPods without metadata.uid (static pods: each release derives the UID itself):")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "POD\tFROM UID (OFFICIAL)\tFROM UID (NEWER GO)\tRUNNING UID\tTO %s VANILLA UID\tTO %s PATCHED UID\t\n", r.To, r.To)
		for _, u := range r.UIDs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", u.Pod, firstOf(u.From, "-"), firstOf(u.FromNewerGo, "same"), firstOf(u.Running, "-"), u.ToVanilla, u.ToPatched)
		}
		tw.Flush()
		for _, u := range r.UIDs {
			if u.Caveat != "" {
				fmt.Fprintf(w, "%s: FROM's official UID may differ on the node: %s (pin metadata.uid in the manifest to be sure)\n", u.Pod, u.Caveat)
			}
			switch {
			case u.PodReplaced:
				fmt.Fprintf(w, "%s: the patched %s derives another UID, so the whole pod is replaced (pin metadata.uid in the manifest to keep it)\n", u.Pod, r.To)
			case u.VanillaReplaced:
				fmt.Fprintf(w, "%s: the vanilla %s derives another UID and replaces the whole pod; the patched %s keeps the UID it runs with\n", u.Pod, r.To, r.To)
			}
		}
	}
	if len(r.Unmatched) > 0 {
		fmt.Fprintf(w, "\nRunning on the node, described by no pod of the file:\n  %s\n", strings.Join(r.Unmatched, "\n  "))
	}
	if len(r.Hung) > 0 {
		fmt.Fprintf(w, "\nContainers whose inspect did not answer within %s (a kubelet restarted now starts on them):\n", InspectBound)
		for _, h := range r.Hung {
			fmt.Fprintf(w, "  %s (%.12s)\n    vanilla %s: %s\n    patched %s: %s\n", h.Container, h.ID, r.To, h.Vanilla, r.To, h.Patched)
		}
	}
	if len(r.Orphans) > 0 {
		fmt.Fprintln(w, "\nContainers whose sandbox is gone (a kubelet restarted now starts on them):")
		for _, o := range r.Orphans {
			fmt.Fprintf(w, "  %s (%.12s, sandbox %.12s)\n    vanilla %s: %s\n    patched %s: %s\n", o.Container, o.ID, o.SandboxID, r.To, o.Vanilla, r.To, o.Patched)
		}
	}
	switch {
	case !r.Failed():
		fmt.Fprintf(w, "\nOK: the patched %s recreates nothing.\n", r.To)
	default:
		fmt.Fprintf(w, "\nThe patched %s would recreate %d containers and refuse %d.\n", r.To, r.Recreating, r.Rejecting)
	}
}

// WriteJSON renders the report for machines.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
