package nodes

import (
	"io"
	"os"

	"kubelet-toolchain/scripts/internal/fsutil"
)

func fsutilWrite(path string, data []byte) error { return fsutil.WriteFileAtomic(path, data, 0o644) }

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
