//go:build !race

package entrylocation

const raceEnabled = false
