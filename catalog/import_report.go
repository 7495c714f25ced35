package catalog

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// ReadImportFile reads the catalog file at path with ReadImport; an error
// reading it names the file.
func ReadImportFile(path string, opts ReadOptions) (*Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := ReadImport(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return src, nil
}

// ImportReport is where ImportSource reports to, and what it names.
type ImportReport struct {
	// From names the file imported and Into the catalog's database in the
	// report's last line.
	From, Into string
	// Out receives the report; Progress the progress of a large import
	// (1,000 products or more).
	Out, Progress io.Writer
}

// ImportSource imports what ReadImport read, as Import does, and reports
// as `shop catalog import` does: each variant whose stock was kept, the
// reading's notes, and a last line counting the products and variants
// imported and those skipped, with the time it took. An error importing
// names the file.
func (c *Catalog) ImportSource(ctx context.Context, src *Source, r ImportReport) error {
	file := src.File
	start := time.Now()
	opts := &ImportOptions{}
	if len(file.Products) >= 1000 {
		opts.Progress = func(done, total int) {
			fmt.Fprintf(r.Progress, "imported %d/%d products (%d%%)\n", done, total, done*100/total)
		}
	}
	opts.KeptStock = func(k KeptStock) {
		fmt.Fprintf(r.Out, "%s: stock kept at %d, not the file's %d: checkout sessions being paid hold %d units\n", k.VariantID, k.Stock, k.FileStock, k.Stock)
	}
	if err := c.Import(ctx, file, opts); err != nil {
		return fmt.Errorf("%s: %w", r.From, err)
	}
	variants := 0
	for _, p := range file.Products {
		variants += len(p.Variants)
	}
	for _, note := range src.Notes {
		fmt.Fprintln(r.Out, note)
	}
	fmt.Fprintf(r.Out, "imported %d products (%d variants) from %s (%s) into %s in %s%s\n",
		len(file.Products), variants, r.From, src.Format, r.Into, time.Since(start).Round(time.Millisecond), skipped(src.Skipped))
	return nil
}

// skipped says which products an import left out, as the end of its report.
func skipped(counts map[string]int) string {
	if len(counts) == 0 {
		return ""
	}
	var parts []string
	total := 0
	for _, why := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[why], why))
		total += counts[why]
	}
	return fmt.Sprintf("; skipped %d not for sale (%s)", total, strings.Join(parts, ", "))
}
