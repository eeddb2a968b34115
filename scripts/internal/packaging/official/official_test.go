package official

import (
	"testing"
	"time"
)

// Every file a node names is recorded, and the flags file our packages
// ship is byte for byte the official one (dpkg and rpm then keep an
// operator's edit in either direction without asking).
func TestNodes(t *testing.T) {
	for _, n := range Nodes {
		for _, pkgs := range [][]Package{n.RPM, n.Deb} {
			for _, p := range pkgs {
				for _, f := range p.Files {
					if _, err := n.Content(f); err != nil {
						t.Errorf("%s %s: %v", n.Release, f.Path, err)
					}
				}
				for _, s := range p.Scripts {
					if _, err := n.Layout(s); err != nil {
						t.Errorf("%s %s: %v", n.Release, s, err)
					}
				}
			}
		}
	}
	for _, f := range []struct {
		node   Node
		layout string
	}{{node19, "deb/kubelet.default"}, {node113, "rpm/kubelet.sysconfig"}} {
		data, err := f.node.Layout(f.layout)
		if err != nil || string(data) != FlagsFile {
			t.Errorf("%s %s = %q (%v), FlagsFile %q", f.node.Release, f.layout, data, err, FlagsFile)
		}
	}
	if node19.Minor() != "v1.9" || node113.Minor() != "v1.13" {
		t.Errorf("minors %s %s", node19.Minor(), node113.Minor())
	}
	for date, want := range map[time.Time]string{node19.Date: "/etc/systemd/system", node113.Date: "/usr/lib/systemd/system", UnitMoved: "/usr/lib/systemd/system"} {
		if got := RPMUnitDir(date); got != want {
			t.Errorf("RPMUnitDir(%s) = %s, want %s", date, got, want)
		}
	}
}
