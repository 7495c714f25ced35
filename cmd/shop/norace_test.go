//go:build !race

package main

// raceDetector reports whether the tests run with -race.
const raceDetector = false
