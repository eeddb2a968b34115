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
	// StopTimeout is how long a kubelet gets after SIGTERM before SIGKILL.
	StopTimeout = 10 * time.Second
)
