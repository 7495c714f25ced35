package feed

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes the feed to the file at path and returns how many
// products it holds. It writes beside the file and renames over it, so that
// whoever reads the file never sees half a feed.
func (f *Feed) WriteFile(ctx context.Context, path string, format Format) (int, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return 0, fmt.Errorf("write the feed to %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	n, err := f.Write(ctx, w, format)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644) // a published file, not a secret (CreateTemp makes it 0600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return 0, fmt.Errorf("write the feed to %s: %w", path, err)
	}
	return n, nil
}
