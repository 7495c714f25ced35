package accounts

import "time"

// SetClock sets the clock by which s's sign-in forms and its cache of
// client metadata documents expire.
func SetClock(s *Server, now func() time.Time) { s.now, s.clients.now, s.store.now = now, now, now }
