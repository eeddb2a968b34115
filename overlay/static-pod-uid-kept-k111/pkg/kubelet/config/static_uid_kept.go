package config

// The preflight (cmd/podhash) reports every UID this build keeps a running
// static pod under (static-pod-uid-k113; k112-build's keptUIDs takes the
// pod alone).
func init() { keptUIDs = roadKeptUIDs }
