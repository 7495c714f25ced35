package server

import (
	"html/template"
	"net/http"
	"strings"

	"shop/orders"
)

// returnPage is the return policy page the shop makes from its policy's
// returns: (orders.ReturnPagePath), for a merchant whose links name no
// return page of their own.
var returnPage = template.Must(template.New("returns").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Returns and refunds · {{.Shop}}</title>
<style>body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#18181b}</style>
</head><body>
<h1>Returns and refunds</h1>
<p>{{.Summary}}</p>
<h2>How to return</h2>
<p>Ask for the return in the chat where you bought (or with your order id and email): name the items and why. You get a return id and these instructions:</p>
<p>{{.Instructions}}</p>
{{if .Address}}<address>{{range .Address}}{{.}}<br>{{end}}</address>{{end}}
<p>You can cancel a return until the parcel arrives. Once the shop has it, the refund goes to the card you paid with and you get an email.</p>
<p>{{.Shop}}</p>
</body></html>
`))

// ReturnPageHandler serves the return policy page of shopName made from r's policy.
func ReturnPageHandler(shopName string, r *orders.Returns, currency func(int64) string) http.Handler {
	p := r.Policy()
	data := struct {
		Shop, Summary, Instructions string
		Address                     []string
	}{shopName, p.Summary(currency), strings.TrimSpace(p.Instructions), p.Address}
	if data.Instructions == "" {
		data.Instructions = r.Instructions()
	}
	var page strings.Builder
	if err := returnPage.Execute(&page, data); err != nil {
		panic(err) // strings only
	}
	body := page.String()
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write([]byte(body))
	})
}
