//go:build race

package dag_test

// raceEnabled trims the property tests' iteration counts under the race
// detector, which makes them ten times slower and checks the same code.
const raceEnabled = true
