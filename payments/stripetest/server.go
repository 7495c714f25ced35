package stripetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ServeHTTP answers one request to Stripe's API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	if form == nil {
		form = url.Values{}
	}
	for k, v := range r.URL.Query() {
		form[k] = append(form[k], v...)
	}
	key := r.Header.Get("Idempotency-Key")

	s.mu.Lock()
	var a answer
	replayed := false
	switch {
	case s.failLeft > 0:
		s.failLeft--
		a = failure(s.failWith, key)
	case err != nil:
		a = invalid("", "", "Invalid request: the body is not form-encoded (%v).", err)
	default:
		a, replayed = s.serve(r, form, key)
	}
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, Form: form, IdempotencyKey: key, Status: a.status, Replayed: replayed,
	})
	reqID := s.randID("req_", 14)
	s.mu.Unlock()

	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Request-Id", reqID)
	h.Set("Stripe-Version", APIVersion)
	if key != "" && r.Method == http.MethodPost {
		h.Set("Idempotency-Key", key)
		if replayed {
			h.Set("Idempotent-Replayed", "true")
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// failure is FailNext's answer.
func failure(status int, key string) answer {
	switch status {
	case http.StatusTooManyRequests:
		return errAnswer(status, apiError{Type: "invalid_request_error", Code: "rate_limit",
			Message: "Too many requests hit the API too quickly. We recommend an exponential backoff of your requests."})
	case http.StatusConflict:
		return errAnswer(status, apiError{Type: "invalid_request_error", Code: "idempotency_key_in_use",
			Message: fmt.Sprintf("There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): %s. Please try again later.", key)})
	}
	return errAnswer(status, apiError{Type: "api_error", Message: "An unknown error occurred"})
}

// serve checks the key, replays or refuses a reused Idempotency-Key, and
// otherwise routes the request, storing its answer for the key. Stripe
// stores the answer of a request it started to run (a success, a decline,
// a refusal by the endpoint) and none for one refused before (parameters
// that fail validation): here, every answer but a 400 or 404.
func (s *Server) serve(r *http.Request, form url.Values, key string) (answer, bool) {
	if a, ok := checkAuth(r.Header.Get("Authorization")); !ok {
		return a, false
	}
	if r.Method != http.MethodPost || key == "" {
		return s.route(r.Method, r.URL.Path, form), false
	}
	encoded := form.Encode()
	if prev, ok := s.idem[key]; ok {
		switch {
		case prev.method != r.Method || prev.path != r.URL.Path:
			return errAnswer(http.StatusBadRequest, apiError{Type: "idempotency_error", Message: fmt.Sprintf(
				"Keys for idempotent requests can only be used for the same endpoint they were first used for ('%s %s' vs '%s %s'). Try using a key other than '%s' if you meant to execute a different request.",
				prev.method, prev.path, r.Method, r.URL.Path, key)}), false
		case prev.form != encoded:
			return errAnswer(http.StatusBadRequest, apiError{Type: "idempotency_error", Message: fmt.Sprintf(
				"Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '%s' if you meant to execute a different request.", key)}), false
		}
		return prev.answer, true
	}
	a := s.route(r.Method, r.URL.Path, form)
	if a.status != http.StatusBadRequest && a.status != http.StatusNotFound {
		s.idem[key] = stored{method: r.Method, path: r.URL.Path, form: encoded, answer: a}
	}
	return a, false
}

func checkAuth(h string) (answer, bool) {
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || key == "" {
		return errAnswer(http.StatusUnauthorized, apiError{Type: "invalid_request_error",
			Message: "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/."}), false
	}
	if !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "rk_test_") {
		shown := key
		if len(shown) > 12 {
			shown = shown[:8] + strings.Repeat("*", len(shown)-12) + shown[len(shown)-4:]
		}
		return errAnswer(http.StatusUnauthorized, apiError{Type: "invalid_request_error",
			Message: "Invalid API Key provided: " + shown}), false
	}
	return answer{}, true
}

func (s *Server) route(method, path string, form url.Values) answer {
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	if a, ok := s.routeSaved(method, parts, form); ok {
		return a
	}
	switch {
	case method == http.MethodPost && path == "/v1/coupons":
		return s.createCoupon(form)
	case method == http.MethodPost && path == "/v1/checkout/sessions":
		return s.createSession(form)
	case len(parts) == 3 && parts[0] == "checkout" && parts[1] == "sessions" && method == http.MethodGet:
		expand, bad := expansions(form, "payment_intent", "payment_intent.latest_charge", "payment_intent.payment_method")
		if bad != nil {
			return *bad
		}
		cs := s.sessions[parts[2]]
		if cs == nil {
			return noSuch(http.StatusNotFound, "checkout.session", parts[2], "session")
		}
		s.refresh(cs)
		return jsonAnswer(http.StatusOK, s.sessionView(cs, expand))
	case len(parts) == 4 && parts[0] == "checkout" && parts[1] == "sessions" && parts[3] == "expire" && method == http.MethodPost:
		return s.expireSession(parts[2])
	case method == http.MethodPost && path == "/v1/payment_intents":
		return s.createIntent(form)
	case method == http.MethodGet && path == "/v1/payment_intents":
		return s.listIntents(form)
	case method == http.MethodGet && path == "/v1/payment_intents/search":
		return s.searchIntents(form)
	case len(parts) == 2 && parts[0] == "payment_intents" && method == http.MethodGet:
		expand, bad := expansions(form, "latest_charge", "payment_method")
		if bad != nil {
			return *bad
		}
		pi := s.intents[parts[1]]
		if pi == nil {
			return noSuch(http.StatusNotFound, "payment_intent", parts[1], "intent")
		}
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	case method == http.MethodPost && path == "/v1/refunds":
		return s.createRefund(form)
	}
	return errAnswer(http.StatusNotFound, apiError{Type: "invalid_request_error", Message: fmt.Sprintf(
		"Unrecognized request URL (%s: %s). Please see https://stripe.com/docs or we can help at https://support.stripe.com/. (stripetest emulates only some of Stripe's API.)", method, path)})
}

// answer is an HTTP status and a JSON body.
type answer struct {
	status int
	body   []byte
}

// stored is the first answer to an Idempotency-Key, with what it answered.
type stored struct {
	method, path, form string
	answer
}

// apiError is the "error" of Stripe's error answers, and a PaymentIntent's
// last_payment_error.
type apiError struct {
	Type          string         `json:"type"`
	Code          string         `json:"code,omitempty"`
	DeclineCode   string         `json:"decline_code,omitempty"`
	Message       string         `json:"message"`
	Param         string         `json:"param,omitempty"`
	DocURL        string         `json:"doc_url,omitempty"`
	Charge        string         `json:"charge,omitempty"`
	PaymentIntent *intent        `json:"payment_intent,omitempty"`
	PaymentMethod *paymentMethod `json:"payment_method,omitempty"`
}

func jsonAnswer(status int, v any) answer {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // only the emulator's own types are marshalled
	}
	return answer{status, append(body, '\n')}
}

func errAnswer(status int, e apiError) answer {
	if e.Code != "" && e.DocURL == "" {
		e.DocURL = "https://stripe.com/docs/error-codes/" + strings.ReplaceAll(e.Code, "_", "-")
	}
	return jsonAnswer(status, map[string]any{"error": e})
}

func invalid(code, param, format string, args ...any) answer {
	return errAnswer(http.StatusBadRequest, apiError{Type: "invalid_request_error", Code: code, Param: param, Message: fmt.Sprintf(format, args...)})
}

func missing(param string) answer {
	return invalid("parameter_missing", param, "Missing required param: %s.", param)
}

func noSuch(status int, object, id, param string) answer {
	return errAnswer(status, apiError{Type: "invalid_request_error", Code: "resource_missing", Param: param,
		Message: fmt.Sprintf("No such %s: '%s'", object, id)})
}
