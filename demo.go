package shop

import (
	"embed"
	"io/fs"
)

//go:embed testdata/demo
var demo embed.FS

// Demo is the demo merchant: policy.yaml (name, currency, links, shipping, tax,
// promotions), catalog.json (products and variants) and static/ (the images and
// pages the shop serves under /static/).
var Demo fs.FS = mustSub(demo, "testdata/demo")

// DemoStatic is Demo's static/: the demo merchant's images and pages, which
// the shop serves under /static/.
var DemoStatic fs.FS = mustSub(demo, "testdata/demo/static")

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
