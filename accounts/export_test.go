package accounts

import "time"

// SetClock sets the clock by which s's cache of client metadata documents
// expires.
func SetClock(s *Server, now func() time.Time) { s.clients.now = now }
