// Package goldens reads what an official go1.8.3-built kubelet derives
// for the test manifests in testdata/official (`make uid-goldens`: the
// release's own dumps, made by its vanilla helper, rewritten into
// go1.8.3's layout by text rules read from go1.8.3's sources, not by the
// code under test). The in-tree tests of the build and fixes series share
// it; the kubelet never imports it.
package goldens

import (
	"encoding/json"
	"fmt"
	"io/ioutil"
	"path/filepath"
)

// Golden is one static pod of a manifest.
type Golden struct {
	File        string `json:"file"`
	Pod         string `json:"pod"`
	OfficialUID string `json:"officialUID"`
	NewerGoUID  string `json:"newerGoUID"`
	Containers  map[string]struct {
		OfficialHash uint64 `json:"officialHash"`
		NewerGoHash  uint64 `json:"newerGoHash"`
	} `json:"containers"`
}

// Load reads the goldens of an official release line ("1.7", "1.8") from
// dir, the testdata/official directory as the calling test reaches it.
func Load(dir, line string) ([]Golden, error) {
	path := filepath.Join(dir, line, "goldens.json")
	data, err := ioutil.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var gs []Golden
	if err := json.Unmarshal(data, &gs); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(gs) == 0 {
		return nil, fmt.Errorf("%s: no goldens", path)
	}
	return gs, nil
}

// Manifest reads a golden's manifest from dir.
func Manifest(dir string, g Golden) ([]byte, error) {
	return ioutil.ReadFile(filepath.Join(dir, g.File))
}
