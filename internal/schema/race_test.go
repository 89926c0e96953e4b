//go:build race

package schema_test

const raceDetector = true
