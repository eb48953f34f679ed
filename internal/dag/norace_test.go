//go:build !race

package dag_test

const raceEnabled = false
