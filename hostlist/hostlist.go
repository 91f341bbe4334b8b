// Package hostlist is an allow-list of network hosts, for every place the registry fetches
// from a URL it did not choose (release assets during sync, preview images): the host of
// the first URL and of every redirect hop must be on it.
package hostlist

import (
	"net/url"
	"slices"
	"strings"
)

// List is a set of hosts: "host" (any default port) or "host:port" (that port only),
// compared case-insensitively. The zero value allows nothing.
type List struct {
	hosts map[string]bool
}

// New returns the list of hosts, trimmed and lower-cased; empty entries are dropped.
func New(hosts []string) List {
	l := List{hosts: make(map[string]bool, len(hosts))}
	for _, h := range hosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			l.hosts[h] = true
		}
	}
	return l
}

// Allows reports whether u's host is on the list: "host:port" exactly as written, or
// "host" when u uses its scheme's default port (443 for https, 80 for http).
func (l List) Allows(u *url.URL) bool {
	if l.hosts[strings.ToLower(u.Host)] {
		return true
	}
	port := u.Port()
	defaultPort := port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80")
	return defaultPort && l.hosts[strings.ToLower(u.Hostname())]
}

// Len is the number of hosts.
func (l List) Len() int { return len(l.hosts) }

// String lists the hosts in order, as "[a, b]", for messages that name the allow-list.
func (l List) String() string {
	hosts := make([]string, 0, len(l.hosts))
	for h := range l.hosts {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return "[" + strings.Join(hosts, ", ") + "]"
}
