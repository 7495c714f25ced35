package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"shop/contract"
)

// `shop bench --gen-catalog N FILE` writes a catalog of N generated
// products in the import format, the same file for the same N and --seed:
// titles of an adjective, a material and a noun, descriptions drawn from a
// small vocabulary, twelve categories, one to four variants at prices from
// 4 to 210 dollars. One variant in ten is out of stock; the others hold 50
// to 5,000 units, so that long purchase runs do not sell the pool out.

// MaxGenCatalog bounds --gen-catalog.
const MaxGenCatalog = 1_000_000

// GenCatalog writes a catalog of n generated products to the file at path.
func GenCatalog(path string, n int, seed uint64) error {
	if n > MaxGenCatalog {
		return fmt.Errorf("--gen-catalog %d: at most %d products", n, MaxGenCatalog)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gen-catalog: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := writeGenCatalog(w, n, seed); err != nil {
		_ = f.Close()
		return fmt.Errorf("gen-catalog %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("gen-catalog %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("gen-catalog %s: %w", path, err)
	}
	return nil
}

var (
	genAdjectives = strings.Fields("classic modern rustic vintage compact deluxe everyday heavy light soft sturdy slim bold quiet bright warm cool natural handmade organic recycled waxed quilted woven brushed polished hammered ribbed insulated folding")
	genMaterials  = strings.Fields("cotton linen wool merino leather canvas oak walnut bamboo steel brass copper enamel stoneware porcelain glass cork felt denim silk")
	genNouns      = strings.Fields("mug bowl plate tote bag tee hoodie jacket scarf beanie sock blanket pillow lamp candle vase planter basket notebook pen journal wallet belt cap bottle flask knife board towel apron napkin rug chair stool shelf hook tray jar kettle skillet")
	genVocab      = strings.Fields("made for daily use with care and attention by small workshops that source locally the finish improves over years wash by hand or machine on a gentle cycle dry flat keep away from direct heat fits most tables desks bags and shelves durable comfortable lightweight generous roomy thoughtful detail stitched seams reinforced edges soft touch matte gloss finish gift ready packed in recycled paper ideal for travel camping kitchens studios offices bedrooms living rooms gardens weekends mornings evenings coffee tea water books tools keys phones")
	genColours    = strings.Fields("Black White Navy Forest Rust Sand Slate Olive Blue Red")
	genSizes      = strings.Fields("XS S M L XL")
	genCategories = strings.Fields("Kitchen Apparel Home Outdoors Stationery Accessories Garden Bath Travel Office Kids Pets")
)

// writeGenCatalog writes the catalog one product at a time.
func writeGenCatalog(w *bufio.Writer, n int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(words []string) string { return words[r.IntN(len(words))] }
	if _, err := w.WriteString(`{"currency": "usd", "products": [` + "\n"); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for i := range n {
		title := pick(genAdjectives) + " " + pick(genMaterials) + " " + pick(genNouns)
		desc := make([]string, 20+r.IntN(20))
		for k := range desc {
			desc[k] = pick(genVocab)
		}
		id := fmt.Sprintf("p%06d", i)
		p := contract.ProductRecord{
			ID: id, Title: strings.ToUpper(title[:1]) + title[1:], Category: pick(genCategories),
			Description: strings.Join(desc, " ") + ".", Images: []string{"/static/products/" + id + ".svg"},
		}
		base := int64(400 + r.IntN(20000))
		for k := range 1 + r.IntN(4) {
			price, stock := base+int64(k*200), int64(50+r.IntN(4951))
			if r.IntN(10) == 0 {
				stock = 0
			}
			colour := genColours[(i+k)%len(genColours)]
			p.Variants = append(p.Variants, contract.VariantRecord{
				ID: fmt.Sprintf("%s-%d", id, k), Title: genSizes[k] + " / " + colour,
				Options: map[string]string{"Size": genSizes[k], "Colour": colour},
				Price:   &price, Stock: &stock,
			})
		}
		if i > 0 {
			if _, err := w.WriteString(","); err != nil {
				return err
			}
		}
		if err := enc.Encode(p); err != nil {
			return err
		}
	}
	_, err := w.WriteString("]}\n")
	return err
}
