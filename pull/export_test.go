package pull

import "time"

// SetNow replaces the clock of a Syncer and its client.
func SetNow(s *Syncer, now func() time.Time) {
	s.now = now
	s.gh.now = now
}

// SetClientNow replaces the clock of a Client.
func SetClientNow(c *Client, now func() time.Time) { c.now = now }
