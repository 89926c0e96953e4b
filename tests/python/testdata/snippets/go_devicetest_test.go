// The harness of docs/copy-engine.md's test of a backend: myBackend is the
// reader's own.
package snippet

import (
	"testing"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/devices/devicetest"
)

var myBackend devices.Backend

// SNIPPET
