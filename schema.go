package dlgen

import (
	"bytes"
	_ "embed"
)

//go:embed schema/dlpack.yaml
var schema []byte

// Schema returns the text of schema/dlpack.yaml, the DLPack releases dlgen
// knows as one versioned schema: the source of truth that every generated
// file comes from. It lives here because go:embed reaches no parent folder;
// the generator's loader reads it from here.
func Schema() []byte { return bytes.Clone(schema) }
