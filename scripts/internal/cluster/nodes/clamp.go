package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"kubelet-toolchain/tools/execx"
)

// BuildRuncClamp builds tools/runcclamp as a static binary at out
// (temp, then rename: a running node may be using the old one). The
// node's inner runc needs it: the node lacks CAP_SYS_RESOURCE, so a
// negative oom_score_adj or a privileged container fails without it.
func BuildRuncClamp(ctx context.Context, root, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("runc-clamp: %w", err)
	}
	tmp := out + ".tmp"
	if _, err := execx.Run(ctx, execx.Cmd{
		Name: "go", Args: []string{"build", "-trimpath", "-o", tmp, "./runcclamp"},
		Dir: filepath.Join(root, "tools"), Env: []string{"CGO_ENABLED=0"}, Timeout: 5 * time.Minute,
	}); err != nil {
		return fmt.Errorf("runc-clamp: build: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("runc-clamp: %w", err)
	}
	return nil
}
