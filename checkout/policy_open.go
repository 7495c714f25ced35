package checkout

import (
	"fmt"
	"os"
	"path/filepath"

	"shop"
)

// OpenPolicy reads the merchant policy in the file at path (--config), or
// the built-in demo merchant's (shop.Demo) when path is "".
func OpenPolicy(path string) (*Policy, error) {
	if path == "" {
		return LoadPolicyFile(shop.Demo, "policy.yaml")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	return LoadPolicyFile(os.DirFS(filepath.Dir(abs)), filepath.Base(abs))
}
