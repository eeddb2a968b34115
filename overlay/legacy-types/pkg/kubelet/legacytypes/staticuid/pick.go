package staticuid

import "github.com/golang/glog"

// Pick is what applyDefaults gives a static pod without metadata.uid:
// Choose's derivation for namespace/name (the pod's final name, with the
// node name appended), logged when there was a choice to make.
func Pick(namespace, name string, ds []Derivation) Derivation {
	d, running := Choose(namespace, name, ds)
	if len(ds) > 1 {
		how := "runs nowhere yet"
		if running {
			how = "its sandbox runs with it"
		}
		glog.V(2).Infof("Static pod %s/%s: UID %s as %s derives it (%s; %d known derivations)", namespace, name, d.UID, d.Name, how, len(ds))
	}
	return d
}
