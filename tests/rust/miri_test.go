package rust

import (
	"fmt"
	"testing"
)

// TestSafeLayerUnderMiri runs the safe layer's tests in Miri, which fails
// on undefined behaviour: a use after free, a double free, a deleter called
// twice, a data race, an aliasing violation (Stacked Borrows), a leak.
// The safe layer is the same source in every release; the newest runs, with
// its doctests (which hand tensors to and take them from raw pointers).
func TestSafeLayerUnderMiri(t *testing.T) {
	s, releases := Releases(t)
	dir := Crate(t, s, releases[len(releases)-1])
	out := RunCargo(t, dir, "+"+Nightly(t), "miri", "test", "--test", "safe_layer")
	docs := RunCargo(t, dir, "+"+Nightly(t), "miri", "test", "--doc")
	fmt.Printf("Miri: %d safe-layer tests and %d doctests passed\n", passed(t, out), passed(t, docs))
}
