// Package smtptest runs a real SMTP server on 127.0.0.1 for tests
// (github.com/emersion/go-smtp): it keeps every message it accepts, and
// answers the next messages with the refusals a test scripts (451, 550, …).
package smtptest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Server is an SMTP server listening on 127.0.0.1.
type Server struct {
	// Addr is host:port.
	Addr string
	// URL is the shop's SMTP URL of the server (no TLS: it is on this machine).
	URL string

	srv *smtp.Server
	mu  sync.Mutex
	got []Message
	// refuse holds the codes the next DATA commands answer with, in turn.
	refuse []int
	// tries counts every message offered, accepted or not.
	tries int
}

// Message is a message the server accepted.
type Message struct {
	From string
	To   []string
	Data []byte
}

// Start starts a server, closed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String()}
	s.URL = "smtp://" + s.Addr + "?tls=none"
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	s.srv.Domain = "127.0.0.1"
	s.srv.ReadTimeout = 30 * time.Second
	s.srv.WriteTimeout = 30 * time.Second
	s.srv.ErrorLog = discard{}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

type discard struct{}

func (discard) Printf(string, ...any) {}
func (discard) Println(...any)        {}

// Refuse makes the next messages' DATA answer with codes, one each, in turn
// (4xx: try again later; 5xx: refused for good); the ones after are accepted.
func (s *Server) Refuse(codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = append(s.refuse, codes...)
}

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.got...)
}

// Tries counts the messages offered so far, refused ones included.
func (s *Server) Tries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries
}

// Wait waits until the server has accepted at least n messages, at most
// timeout, and returns them; it fails the test when they do not come.
func (s *Server) Wait(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := s.Messages()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the SMTP server received %d message(s) in %s, want %d", len(got), timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Subjects counts the messages accepted so far by their Subject; it fails
// the test on a message that does not parse.
func (s *Server) Subjects(t testing.TB) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, m := range s.Messages() {
		p, err := m.Parse()
		if err != nil {
			t.Fatal(err)
		}
		seen[p.Header.Get("Subject")]++
	}
	return seen
}

type session struct {
	s    *Server
	from string
	to   []string
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }

func (ss *session) Mail(from string, _ *smtp.MailOptions) error { ss.from = from; return nil }

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries++
	if len(s.refuse) > 0 {
		code := s.refuse[0]
		s.refuse = s.refuse[1:]
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 0, 0}, Message: fmt.Sprintf("test server refuses with %d", code)}
	}
	s.got = append(s.got, Message{From: ss.from, To: append([]string(nil), ss.to...), Data: data})
	return nil
}

// Parsed is a message read as a mail client reads it.
type Parsed struct {
	Header mail.Header
	// Parts are the decoded bodies by media type ("text/plain", "text/html"),
	// with their lines ending in "\n".
	Parts map[string]string
}

// Parse reads m's headers and its MIME parts, decoding their transfer
// encodings; a message that is not well-formed MIME is an error.
func (m Message) Parse() (*Parsed, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return nil, fmt.Errorf("read message: %w", err)
	}
	p := &Parsed{Header: msg.Header, Parts: map[string]string{}}
	err = p.part(msg.Header, msg.Body)
	return p, err
}

func (p *Parsed) part(h map[string][]string, body io.Reader) error {
	get := func(k string) string {
		if v := h[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	mt, params, err := mime.ParseMediaType(get("Content-Type"))
	if err != nil {
		return fmt.Errorf("content type %q: %w", get("Content-Type"), err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", mt, err)
			}
			if err := p.part(part.Header, part); err != nil {
				return err
			}
		}
	}
	switch strings.ToLower(get("Content-Transfer-Encoding")) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("%s body: %w", mt, err)
	}
	if _, dup := p.Parts[mt]; dup {
		return fmt.Errorf("two %s parts", mt)
	}
	p.Parts[mt] = strings.ReplaceAll(string(b), "\r\n", "\n") // as a mail client shows it
	return nil
}
