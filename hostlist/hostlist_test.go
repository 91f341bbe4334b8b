package hostlist_test

import (
	"net/url"
	"testing"

	"github.com/pluginyard/registry/hostlist"
)

func TestAllows(t *testing.T) {
	l := hostlist.New([]string{" GitHub.com ", "mirror.example:8443", ""})
	for raw, want := range map[string]bool{
		"https://github.com/x":            true,
		"https://GITHUB.COM/x":            true,
		"https://github.com:443/x":        true,
		"http://github.com:80/x":          true,
		"https://github.com:8443/x":       false,
		"https://mirror.example:8443/x":   true,
		"https://mirror.example/x":        false,
		"https://evil.github.com/x":       false,
		"https://github.com.evil.test/x":  false,
		"https://user@objects.example/x":  false,
		"http://[::1]:80/x":               false,
		"https://mirror.example:8443@x/y": false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Allows(u); got != want {
			t.Errorf("Allows(%s) = %v, want %v", raw, got, want)
		}
	}
	if got := l.String(); got != "[github.com, mirror.example:8443]" {
		t.Errorf("String() = %s", got)
	}
	if l.Len() != 2 || (hostlist.List{}).Allows(&url.URL{Scheme: "https", Host: "github.com"}) {
		t.Error("Len or the zero List is wrong")
	}
}
