// Package all registers every backend dlgen runs: importing a backend's
// package registers it (backend.Register, from its init function), and this
// package only lists them, as a program imports its database/sql drivers.
// cmd/dlgen imports it, and so does every test that runs the driver. A new
// language is one line here.
package all

import (
	_ "github.com/dlgen/dlgen/internal/backend/c"
	_ "github.com/dlgen/dlgen/internal/backend/conformance"
	_ "github.com/dlgen/dlgen/internal/backend/golang"
	_ "github.com/dlgen/dlgen/internal/backend/python"
	_ "github.com/dlgen/dlgen/internal/backend/rust"
)
