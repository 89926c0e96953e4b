// Package pyruntime holds dlgen's hand-written Python runtime: the DLPack
// protocol that runs in users' processes, the same for every release. The
// Python backend (internal/backend/python) ships these sources inside the modules it
// generates: a Python source (.py, .pyi) after a module's declarations, a
// Cython source (.pxi) beside the .pyx and .pxd that include it. They are
// ordinary files that linters, editors and tests read as they are.
package pyruntime

import "embed"

// Sources are the hand-written sources, by file name.
//
//go:embed *.py *.pyi *.pxi
var Sources embed.FS
