// Package conformance holds the DLPack conformance kit's hand-written
// sources: the Python package dlpack_conformance (the runner, the cases, the
// reference producer and consumer, the adapters, the pytest plugin), its
// pytest entry point for a kit not installed and its README. They are the
// same for every DLPack release; the generator (internal/backend/conformance)
// ships them under conformance/ beside the release's generated reference
// module (dlpack_ctypes.py), corpus (corpus.py) and pyproject.toml.
// docs/conformance-kit.md is the maintainer's guide.
package conformance

import "embed"

// Sources are the kit's files, by their path under conformance/.
//
//go:embed dlpack_conformance/*.py test_dlpack_conformance.py README.md
var Sources embed.FS
