package widgets

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// hostName is a DNS host name, as some hosts give a widget's domain
// ("abc123.claudemcpcontent.com").
var hostName = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)

// ParseDomain checks SHOP_WIDGET_DOMAIN, the widgets' Options.Domain: an
// https origin (ChatGPT's form, https://shop.example.com, a trailing /
// dropped) or a bare host name as it is written: the form is the host's.
// "" is no domain.
func ParseDomain(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	bad := fmt.Errorf("SHOP_WIDGET_DOMAIN %q: send the https origin your app's widgets get, unique to the app, such as https://shop.example.com", s)
	if len(s) > 260 {
		return "", bad
	}
	if hostName.MatchString(s) {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Host != strings.ToLower(u.Host) || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil || !hostName.MatchString(u.Hostname()) {
		return "", bad
	}
	return "https://" + u.Host, nil
}
