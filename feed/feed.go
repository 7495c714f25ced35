// Package feed publishes the catalog as a product feed of the Agentic
// Commerce Protocol (ACP, spec 2026-04-17: json-schema/schema.feed.json and
// rfcs/rfc.product_feeds.md), the catalog agents index before any checkout.
//
// A feed record is a Product of the schema with its Variants: each
// variant's id is the shop's variant id, the id create_checkout_session's
// items take; its price is in minor units with the upper-case ISO 4217
// code; its availability is the stock on hand minus live holds (available,
// and status in_stock or out_of_stock); its media are the product's images
// (and the variant's own first); its category is the merchant's; its seller
// is the merchant, with the policy's pages as links. The shop has no
// product pages, so records carry no url, which the schema leaves optional.
//
// The feed is written as JSON Lines (one Product per line, the file of the
// RFC's full replacement) or as one JSON object {"products": [...]} (the
// body of the agent's PATCH /feeds/{id}/products). Handler serves the JSON
// Lines over HTTP from a cache that follows imports at once and the
// availability every Options.Refresh (see Handler). `shop feed export` writes it to a file or
// stdout (ExportArgs, Export).
package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shop/catalog"
)

// Format is how Write lays the records out.
type Format string

// The formats of a feed.
const (
	JSONL Format = "jsonl" // one Product per line
	JSON  Format = "json"  // {"products": [Product, …]}
)

// Options describe the seller; the zero value publishes a feed without one.
type Options struct {
	// Seller is the merchant's name, as buyers see it.
	Seller string
	// Links are the seller's pages (ACP link types such as terms_of_service,
	// privacy_policy, refund_policy); a URL that is a path ("/static/…") is
	// resolved against PublicURL.
	Links []Link
	// PublicURL is the shop's base URL.
	PublicURL string
	// Logger receives the errors Handler cannot answer with; default none.
	Logger *slog.Logger
	// Refresh is how long Handler serves a feed before it reads the
	// availability again (default DefaultRefresh): holds and sales change
	// it at every checkout, and anyone can hold a variant's last units.
	// An import is served at once.
	Refresh time.Duration
}

// DefaultRefresh is Options.Refresh's default.
const DefaultRefresh = time.Minute

// Pages are the merchant's pages, as the policy names them; Links makes
// them the seller's links of Options.
type Pages struct {
	TermsOfUse, PrivacyPolicy, ReturnPolicy, Support string
}

// Links are the pages as the feed's seller links, with their ACP types.
func (p Pages) Links() []Link {
	return []Link{
		{Type: "terms_of_service", Title: "Terms of use", URL: p.TermsOfUse},
		{Type: "privacy_policy", Title: "Privacy policy", URL: p.PrivacyPolicy},
		{Type: "refund_policy", Title: "Return policy", URL: p.ReturnPolicy},
		{Type: "support", Title: "Support", URL: p.Support},
	}
}

// Feed is the product feed of a catalog.
type Feed struct {
	catalog *catalog.Catalog
	seller  *Seller
	logger  *slog.Logger

	refresh time.Duration
	now     func() time.Time

	mu     sync.Mutex // guards cached; held while one request regenerates it
	cached *snapshot
	builds atomic.Int64 // feeds generated, for the tests
}

// New returns the feed of c.
func New(c *catalog.Catalog, opts Options) *Feed {
	f := &Feed{catalog: c, logger: opts.Logger, refresh: opts.Refresh, now: time.Now}
	if f.logger == nil {
		f.logger = slog.New(slog.DiscardHandler)
	}
	if f.refresh <= 0 {
		f.refresh = DefaultRefresh
	}
	if opts.Seller != "" || len(opts.Links) > 0 {
		f.seller = &Seller{Name: opts.Seller}
		base := strings.TrimRight(opts.PublicURL, "/")
		for _, l := range opts.Links {
			if strings.HasPrefix(l.URL, "/") {
				l.URL = base + l.URL
			}
			f.seller.Links = append(f.seller.Links, l)
		}
	}
	return f
}

// Write writes every product of the catalog to w as a feed in format and
// returns how many it wrote.
func (f *Feed) Write(ctx context.Context, w io.Writer, format Format) (int, error) {
	if format != JSONL && format != JSON {
		return 0, fmt.Errorf("feed: unknown format %q; use jsonl or json", format)
	}
	st, err := f.state(ctx)
	if err != nil {
		return 0, err
	}
	return f.write(ctx, w, format, st)
}

// write writes the feed with the availability of st.
func (f *Feed) write(ctx context.Context, w io.Writer, format Format, st *state) (int, error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	switch format {
	case JSONL:
		err := f.catalog.Each(ctx, func(p *catalog.Product) error { n++; return enc.Encode(f.record(p, st)) })
		return n, err
	case JSON:
		if _, err := io.WriteString(w, `{"products":[`); err != nil {
			return 0, err
		}
		err := f.catalog.Each(ctx, func(p *catalog.Product) error {
			if n++; n > 1 {
				if _, err := io.WriteString(w, ","); err != nil {
					return err
				}
			}
			b, err := marshal(f.record(p, st))
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		})
		if err != nil {
			return n, err
		}
		_, err = io.WriteString(w, "]}\n")
		return n, err
	}
	return 0, fmt.Errorf("feed: unknown format %q; use jsonl or json", format)
}

// marshal is json.Marshal without escaping <, > and &.
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// record is the feed's Product for a product of the catalog, available as
// st says.
func (f *Feed) record(p *catalog.Product, st *state) Product {
	out := Product{ID: p.ID, Title: p.Title, Variants: make([]Variant, 0, len(p.Variants))}
	if p.Description != "" {
		out.Description = &Description{Plain: p.Description}
	}
	for _, img := range p.Images {
		out.Media = append(out.Media, Media{Type: "image", URL: img, AltText: p.Title})
	}
	for _, v := range p.Variants {
		rv := Variant{
			ID:           v.ID,
			Title:        variantTitle(p.Title, v.Title),
			Price:        &Price{Amount: v.Price.Amount, Currency: strings.ToUpper(v.Price.Currency)},
			Availability: availability(!st.soldOut[v.ID]),
			Seller:       f.seller,
		}
		if p.Category != "" {
			rv.Categories = []Category{{Value: p.Category, Taxonomy: "merchant"}}
		}
		for _, name := range slices.Sorted(maps.Keys(v.Options)) {
			rv.VariantOptions = append(rv.VariantOptions, VariantOption{Name: name, Value: v.Options[name]})
		}
		if v.ImageURL != "" {
			rv.Media = append(rv.Media, Media{Type: "image", URL: v.ImageURL, AltText: rv.Title})
		}
		for _, m := range out.Media {
			if m.URL != v.ImageURL {
				rv.Media = append(rv.Media, m)
			}
		}
		out.Variants = append(out.Variants, rv)
	}
	return out
}

// variantTitle is how checkout names a variant's line: the product's title
// and the variant's, or the product's alone for its only "Default" one.
func variantTitle(product, variant string) string {
	if variant == "" || variant == "Default" {
		return product
	}
	return product + " — " + variant
}

func availability(available bool) *Availability {
	if available {
		return &Availability{Available: true, Status: "in_stock"}
	}
	return &Availability{Available: false, Status: "out_of_stock"}
}
