package purchase

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"time"
)

// mailbox is the SMTP server of --smtp-capture: the shop, started with
// SHOP_SMTP_URL=smtp://ADDR?tls=none, sends its emails here, and the run
// reads the sign-in code of its login from them, as the buyer reads it in
// their inbox. It accepts any message (at most maxMailBytes) and keeps none
// beyond the run.
type mailbox struct {
	ln   net.Listener
	msgs chan []byte
}

const (
	maxMailBytes = 1 << 20
	mailTimeout  = 30 * time.Second
)

// listenMailbox starts the SMTP server on addr.
func listenMailbox(addr string) (*mailbox, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--smtp-capture %s: %w", addr, err)
	}
	m := &mailbox{ln: ln, msgs: make(chan []byte, 64)}
	go m.serve()
	return m, nil
}

func (m *mailbox) close() { _ = m.ln.Close() }

func (m *mailbox) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		go m.conn(c)
	}
}

// conn speaks the server's side of SMTP (RFC 5321) for one connection: no
// TLS and no authentication, for a shop on this machine.
func (m *mailbox) conn(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(mailTimeout))
	tp := textproto.NewConn(c)
	_ = tp.PrintfLine("220 shop-purchase ESMTP")
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, _, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			_ = tp.PrintfLine("250-shop-purchase")
			_ = tp.PrintfLine("250 8BITMIME")
		case "HELO", "MAIL", "RCPT", "RSET", "NOOP":
			_ = tp.PrintfLine("250 OK")
		case "DATA":
			_ = tp.PrintfLine("354 end with <CR><LF>.<CR><LF>")
			data, err := io.ReadAll(io.LimitReader(tp.DotReader(), maxMailBytes+1))
			if err != nil {
				return
			}
			if len(data) > maxMailBytes {
				_ = tp.PrintfLine("552 message too large")
				return
			}
			select {
			case m.msgs <- data:
			default: // nobody reads that many: drop it
			}
			_ = tp.PrintfLine("250 OK")
		case "QUIT":
			_ = tp.PrintfLine("221 bye")
			return
		default:
			_ = tp.PrintfLine("502 command not implemented")
		}
	}
}

// signInCode matches the code in the shop's sign-in email.
var signInCode = regexp.MustCompile(`sign in to .* is (\d{6})\b`)

// code waits for the sign-in email to email and answers its six-digit code;
// the shop's other emails (order confirmations) are skipped.
func (m *mailbox) code(ctx context.Context, email string) (string, error) {
	for {
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no sign-in email to %s: %w (is the shop started with SHOP_SMTP_URL=smtp://%s?tls=none?)", email, ctx.Err(), m.ln.Addr())
		case data := <-m.msgs:
			msg, err := mail.ReadMessage(bytes.NewReader(data))
			if err != nil {
				return "", fmt.Errorf("an email the shop sent: %w", err)
			}
			to, err := msg.Header.AddressList("To")
			if err != nil || len(to) != 1 || !strings.EqualFold(to[0].Address, email) {
				continue
			}
			text, err := plainText(msg.Header, msg.Body)
			if err != nil {
				return "", fmt.Errorf("the email to %s: %w", email, err)
			}
			if c := signInCode.FindStringSubmatch(text); c != nil {
				return c[1], nil
			}
		}
	}
}

// plainText is the text/plain part of a message, its transfer encoding
// decoded.
func plainText(h map[string][]string, body io.Reader) (string, error) {
	get := func(k string) string { return textproto.MIMEHeader(h).Get(k) }
	mt, params, err := mime.ParseMediaType(get("Content-Type"))
	if err != nil {
		return "", fmt.Errorf("content type %q: %w", get("Content-Type"), err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return "", nil
			}
			if err != nil {
				return "", fmt.Errorf("%s: %w", mt, err)
			}
			if text, err := plainText(part.Header, part); err != nil || text != "" {
				return text, err
			}
		}
	}
	if mt != "text/plain" {
		return "", nil
	}
	switch strings.ToLower(get("Content-Transfer-Encoding")) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	}
	b, err := io.ReadAll(io.LimitReader(body, maxMailBytes))
	return string(b), err
}
