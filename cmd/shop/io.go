package main

import "io"

// readCloser and writeCloser let the command's injected streams serve as a
// stdio transport without closing the process's own.
type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
