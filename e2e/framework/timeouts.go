package framework

import "time"

const (
	// Poll is how often Eventually/Consistently look again.
	Poll = 500 * time.Millisecond
	// SyncFrequency is passed to every kubelet (--sync-frequency): short, so
	// "several sync loops" take seconds, not minutes.
	SyncFrequency = 5 * time.Second
	// FileCheckFrequency is --file-check-frequency: how soon a new static
	// pod manifest is noticed.
	FileCheckFrequency = 2 * time.Second
	// SyncsPerPhase is how many periodic pod syncs a kubelet must log
	// after start before a switch phase is judged (each sync compares the
	// container hashes; PLEG relists every second meanwhile).
	SyncsPerPhase = 3
	// PodStartTimeout bounds a pod getting all its containers running
	// (1.7.5 needs ~6 s from start; images are local).
	PodStartTimeout = 90 * time.Second
	// KubeletStartTimeout bounds a kubelet serving its ports after start
	// (1.7.5 needs ~6 s).
	KubeletStartTimeout = 60 * time.Second
	// LivenessWindow is how long a failing liveness probe of the suites'
	// workloads (periodSeconds 5 x the default failureThreshold 3) takes
	// to get a container killed: a switch phase lasts at least this long,
	// so a kill it provoked happens within the phase that caused it.
	LivenessWindow = 15 * time.Second
	// Spec timeouts: every spec carries one, so a hang fails that spec
	// (with its report) instead of the whole run at go test's -timeout.
	// Side by side on 2 cores specs take up to three times as long as
	// alone (the 1.7 <-> 1.9 vanilla control: 87 s alone, 126-280 s).
	ShortSpec = 5 * time.Minute
	LongSpec  = 10 * time.Minute
	// RehearsalSpec bounds a rehearsal's walk (or its vanilla control):
	// a cluster brought up and 2 nodes switched 4 times, 7-8 min alone
	// (446 s and 433 s on the 1.20.15 control plane), and beside the host
	// suites on 2 cores it overran LongSpec in its last switch twice on
	// one machine (CI, 2026-11-30).
	RehearsalSpec = 20 * time.Minute
	// switchSpec is what a walk spec allows per kubelet switch: about 50 s
	// alone (the road 1.13 <-> 1.18, 11 switches, 497 s), three times as
	// long side by side. Beside the 1.18 <-> 1.20 walk the road and its
	// control overran LongSpec (a 1.18.6 shard, 2026-11-30).
	switchSpec = 150 * time.Second
	// OrphanGCTimeout bounds a running orphan going away: the kubelet's
	// housekeeping stops it, then the container GC (every minute) removes it.
	OrphanGCTimeout = 3 * time.Minute
	// StopTimeout is how long a kubelet gets after SIGTERM before SIGKILL.
	StopTimeout = 10 * time.Second
)

// WalkSpec bounds a walk of the given number of kubelet switches, never
// below LongSpec.
func WalkSpec(switches int) time.Duration {
	return max(LongSpec, time.Duration(switches)*switchSpec)
}
