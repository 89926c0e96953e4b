package c

import (
	"flag"
	"testing"

	"github.com/dlgen/dlgen/internal/backend/backendtest"
)

var update = flag.Bool("update", false, "rewrite the golden archives in testdata/")

// TestGolden pins the backend's text, one feature at a time: the archives
// in testdata/ (package backendtest).
func TestGolden(t *testing.T) { backendtest.Golden(t, "c", *update) }
