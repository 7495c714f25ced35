package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"shop/catalog"
)

// TestGenCatalog checks that the generated catalog imports: valid, and the
// same for the same seed.
func TestGenCatalog(t *testing.T) {
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		path := filepath.Join(dir, "catalog.json")
		if err := GenCatalog(path, 300, 7); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two catalogs of the same seed differ")
	}
	f, err := catalog.ReadFile(bytes.NewReader(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Products) != 300 {
		t.Fatalf("%d products, want 300", len(f.Products))
	}
	if err := f.Validate("usd"); err != nil {
		t.Error(err)
	}
}
