// The harness of docs/go.md's WithRelease example: its statements are the
// body of exchange, given a tensor t and a foreign export; dlpack is dlgen's
// own generated package here, where a reader's is the one their
// //go:generate line wrote.
package main

import (
	"fmt"
	"os"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
)

func exchange(t *dltensor.Tensor, foreign *dlpack.ManagedTensorVersioned) error {
	// SNIPPET
	if err == nil && m.Version != (dlpack.Version{Major: dlpack.MajorVersion, Minor: dlpack.MinorVersion}) {
		err = fmt.Errorf("exported as DLPack %d.%d", m.Version.Major, m.Version.Minor)
	}
	dltensor.DeleteVersioned(m)
	in.Close()
	return err
}

func main() {
	t, err := dltensor.FromSlice([]float32{1, 2, 3})
	if err == nil {
		defer t.Close()
		var foreign *dlpack.ManagedTensorVersioned
		if foreign, err = t.Export(); err == nil {
			err = exchange(t, foreign)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
