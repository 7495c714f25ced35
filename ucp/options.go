package ucp

import (
	"slices"
)

// The option axes of a product (Size, Colour) as UCP's catalog shows them:
// product.options lists each axis and its values in the order the variants
// first name them; get_product adds product.selected, the effective
// selections, and on each value whether a variant of that value with the
// other selections exists and is available.

// productOptions are the option axes of variants, in the order first named.
func productOptions(variants []Variant) []ProductOption {
	var out []ProductOption
	for _, v := range variants {
		for _, o := range v.Options {
			i := slices.IndexFunc(out, func(p ProductOption) bool { return p.Name == o.Name })
			if i < 0 {
				out = append(out, ProductOption{Name: o.Name})
				i = len(out) - 1
			}
			if !slices.ContainsFunc(out[i].Values, func(v OptionValue) bool { return v.Label == o.Label }) {
				out[i].Values = append(out[i].Values, OptionValue{Label: o.Label})
			}
		}
	}
	return out
}

// optionOf is the label of a variant's option name, "" when it has none.
func optionOf(v Variant, name string) string {
	for _, o := range v.Options {
		if o.Name == name {
			return o.Label
		}
	}
	return ""
}

// matches reports whether v has every selection of sel but the one named skip.
func matches(v Variant, sel []SelectedOption, skip string) bool {
	for _, s := range sel {
		if s.Name != skip && optionOf(v, s.Name) != s.Label {
			return false
		}
	}
	return true
}

// relax drops selections that no variant matches, from the end of
// preferences (else from the end of sel), until some variant matches all.
func relax(variants []Variant, sel []SelectedOption, preferences []string) []SelectedOption {
	sel = slices.Clone(sel)
	order := slices.Clone(preferences)
	for _, s := range slices.Backward(sel) {
		if !slices.Contains(order, s.Name) {
			order = append([]string{s.Name}, order...)
		}
	}
	for len(sel) > 0 && !slices.ContainsFunc(variants, func(v Variant) bool { return matches(v, sel, "") }) {
		drop := order[len(order)-1]
		order = order[:len(order)-1]
		sel = slices.DeleteFunc(sel, func(s SelectedOption) bool { return s.Name == drop })
	}
	return sel
}

// selectVariant shapes a get_product answer: with a variant id, that
// variant first and its options the selections (a variant fully determines
// them); otherwise the agent's selections, relaxed until a variant matches,
// and the first available variant matching them featured (the first
// variant without selections). A variant id narrows the variants to those
// matching its selections, as the specification says; a product id keeps
// them all, the featured first. Option values carry availability signals
// relative to the selections.
func selectVariant(p *Product, variantID string, selected []SelectedOption, preferences []string) {
	all := p.Variants
	if len(all) == 0 {
		return
	}
	p.Options = productOptions(all)
	featured := slices.IndexFunc(all, func(v Variant) bool { return v.ID == variantID })
	if featured >= 0 {
		selected = all[featured].Options
	} else {
		variantID = ""
		selected = relax(all, selected, preferences)
		for j, v := range all {
			if matches(v, selected, "") && (featured < 0 || !available(all[featured]) && available(v)) {
				featured = j
			}
		}
		featured = max(featured, 0)
		if len(selected) == 0 {
			selected = all[featured].Options
		}
	}
	p.Selected = selected
	p.Variants = []Variant{all[featured]}
	for j, v := range all {
		if j != featured && (variantID == "" || matches(v, selected, "")) {
			p.Variants = append(p.Variants, v)
		}
	}
	for i := range p.Options {
		o := &p.Options[i]
		for k := range o.Values {
			exists, avail := false, false
			for _, v := range all {
				if optionOf(v, o.Name) == o.Values[k].Label && matches(v, selected, o.Name) {
					exists, avail = true, avail || available(v)
				}
			}
			o.Values[k].Exists, o.Values[k].Available = &exists, &avail
		}
	}
}

// available reports whether a variant can be bought now.
func available(v Variant) bool { return v.Availability != nil && v.Availability.Available }

// featureNamed puts first, in a lookup's product, the variants the
// lookup named by their own ids, in the order named.
func featureNamed(p *Product, ids []string) {
	rank := func(v Variant) int {
		if i := slices.Index(ids, v.ID); i >= 0 {
			return i
		}
		return len(ids)
	}
	slices.SortStableFunc(p.Variants, func(a, b Variant) int { return rank(a) - rank(b) })
}
