//go:build race

package stats

// raceEnabled: the race detector slows the simulation tenfold; it runs
// fewer streams there (the full count runs without it and in the
// benchmark).
const raceEnabled = true
