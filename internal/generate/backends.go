package generate

// The backends dlgen runs: importing a backend's package registers it
// (backend.Register, from its init function). A new language is one line
// here.
import (
	_ "github.com/dlgen/dlgen/internal/backend/c"
	_ "github.com/dlgen/dlgen/internal/backend/conformance"
	_ "github.com/dlgen/dlgen/internal/backend/golang"
	_ "github.com/dlgen/dlgen/internal/backend/python"
	_ "github.com/dlgen/dlgen/internal/backend/rust"
)
