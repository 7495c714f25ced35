package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// SMTP sends messages to one SMTP server through github.com/wneessen/go-mail.
type SMTP struct {
	host     string
	port     int
	security string // "starttls", "tls" or "none"
	user     string
	password string
	timeout  time.Duration
}

// ParseSMTPURL reads the SMTP server's URL:
//
//	smtp://user:pass@host:587            STARTTLS, required (the default; port 587 when left out)
//	smtps://user:pass@host:465           TLS from the first byte (port 465 when left out)
//	smtp://127.0.0.1:1025?tls=none       no TLS at all, for a relay on this machine only
//	                                     (Mailpit on a laptop, a test server); the host must be a loopback address or localhost
//
// User and password are optional (URL-encoded when they hold special characters).
func ParseSMTPURL(raw string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL; send smtp://user:pass@host:587, smtps://user:pass@host:465 or smtp://127.0.0.1:1025?tls=none")
	}
	s := &SMTP{host: u.Hostname(), timeout: 30 * time.Second}
	switch u.Scheme {
	case "smtp":
		s.security, s.port = "starttls", 587
	case "smtps":
		s.security, s.port = "tls", 465
	default:
		return nil, fmt.Errorf("scheme %q: send smtp:// (STARTTLS) or smtps:// (TLS)", u.Scheme)
	}
	if s.host == "" {
		return nil, errors.New("no host; send smtp://user:pass@host:587")
	}
	if p := u.Port(); p != "" {
		if s.port, err = strconv.Atoi(p); err != nil || s.port < 1 || s.port > 65535 {
			return nil, fmt.Errorf("port %q: send a number from 1 to 65535", p)
		}
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.password, _ = u.User.Password()
	}
	q := u.Query()
	for k := range q {
		if k != "tls" {
			return nil, fmt.Errorf("unknown parameter %q; the one parameter is tls=none", k)
		}
	}
	switch tls := q.Get("tls"); tls {
	case "":
	case "none":
		if u.Scheme != "smtp" {
			return nil, errors.New("tls=none goes with smtp://, not smtps://")
		}
		if !loopback(s.host) {
			return nil, fmt.Errorf("tls=none sends in the clear, so only to this machine: host %q is not 127.0.0.1, ::1 or localhost", s.host)
		}
		s.security = "none"
	default:
		return nil, fmt.Errorf("tls=%q: the one value is none", tls)
	}
	return s, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// String describes the server without its password, for the start-up log.
func (s *SMTP) String() string {
	u := url.URL{Scheme: "smtp", Host: net.JoinHostPort(s.host, strconv.Itoa(s.port))}
	if s.security == "tls" {
		u.Scheme = "smtps"
	}
	if s.user != "" {
		u.User = url.User(s.user)
	}
	if s.security == "none" {
		u.RawQuery = "tls=none"
	}
	return u.String()
}

// Send delivers m. A refusal with a 5xx reply comes back wrapped in a
// *PermanentError; anything else (a 4xx reply, no connection, a timeout) is
// temporary.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.message(m)
	if err != nil {
		return &PermanentError{Err: err}
	}
	opts := []gomail.Option{gomail.WithPort(s.port), gomail.WithTimeout(s.timeout)}
	switch s.security {
	case "starttls":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "tls":
		opts = append(opts, gomail.WithSSL())
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if s.user != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(s.user), gomail.WithPassword(s.password))
	}
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return &PermanentError{Err: fmt.Errorf("smtp client: %w", err)}
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		var se *gomail.SendError
		if errors.As(err, &se) && !se.IsTemp() && se.ErrorCode() >= 500 && se.ErrorCode() < 600 {
			return &PermanentError{Err: err}
		}
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// message builds the MIME message: multipart/alternative of the plain text
// and the HTML, with a Message-ID made from the outbox row's id.
func (s *SMTP) message(m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := msg.From(m.From); err != nil {
		return nil, fmt.Errorf("from %q: %w", m.From, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("to %q: %w", m.To, err)
	}
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(m.ReplyTo); err != nil {
			return nil, fmt.Errorf("reply-to %q: %w", m.ReplyTo, err)
		}
	}
	domain := "shop.invalid"
	if at := strings.LastIndexByte(m.From, '@'); at >= 0 {
		domain = strings.Trim(m.From[at+1:], "> ")
	}
	msg.SetMessageIDWithValue(m.ID + "@" + domain)
	msg.SetDateWithValue(m.Date)
	msg.Subject(m.Subject)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}
