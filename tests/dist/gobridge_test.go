package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCgoBridgeGuideAtEveryRelease builds docs/go.md's cgo bridge as the
// guide writes it (bridge.go, use.py and the commands), in a new module
// outside dlgen's tree, pinned to each release of the schema in turn: the
// //go:generate line writes the header and the Go package into the module,
// cgo includes that header, and NumPy takes the export of the c-shared
// library. From 1.0 on, the version NumPy receives is the pinned release's;
// before 1.0, the bridge is the guide's legacy variant (ExportLegacy, a
// DLManagedTensor, the capsule "dltensor"), and NumPy takes that.
func TestCgoBridgeGuideAtEveryRelease(t *testing.T) {
	tooltest.Require(t, "gcc")
	python := filepath.Join(tooltest.Root(), ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		tooltest.Missing(t, "the venv .venv (NumPy) is not installed")
	}
	bridge, use, commands := bridgeGuide(t)
	s, err := schema.Default()
	require.NoError(t, err)
	module := toolModule(t, "example.com/bridge")
	for _, rel := range s.Releases {
		api := s.At(rel.Version)
		t.Run(rel.Version.String(), func(t *testing.T) {
			goSource, pySource, want := bridge, use, "[0. 1. 2. 3. 4. 5.]\n"
			goSource = replaceOnce(t, goSource, "-dlpack-version 1.1", "-dlpack-version "+rel.Version.String())
			if api.Versioned() {
				want = fmt.Sprintf("DLPack %d.%d\n", api.Versions.Major.Value, api.Versions.Minor.Value) + want
			} else { // the legacy variant, as the guide words it
				goSource = replaceOnce(t, goSource, "t.Export(pinned)", "t.ExportLegacy(pinned)")
				goSource = strings.ReplaceAll(goSource, "C.DLManagedTensorVersioned", "C.DLManagedTensor")
				pySource = replaceOnce(t, pySource, `b"dltensor_versioned"`, `b"dltensor"`)
				pySource = regexp.MustCompile(`(?m)^.*(major, minor|print\(f"DLPack).*\n`).ReplaceAllString(pySource, "")
			}
			require.NoError(t, os.RemoveAll(filepath.Join(module, "internal")))
			require.NoError(t, os.WriteFile(filepath.Join(module, "bridge.go"), []byte(goSource), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(module, "use.py"), []byte(pySource), 0o644))
			var out string
			for _, c := range commands {
				if c[0] == "python" {
					c = append([]string{python}, c[1:]...)
				}
				out = tooltest.Run(t, module, moduleEnv, c[0], c[1:]...)
			}
			assert.Equal(t, want, out)
			assert.FileExists(t, filepath.Join(module, "internal", "c", "dlpack", "dlpack.h"), "the module's own header")
		})
	}
	// A //go:generate line without -lang c: the build names the header the
	// module lacks, and never falls back to a dlpack/dlpack.h of the system.
	t.Run("without -lang c", func(t *testing.T) {
		require.NoError(t, os.RemoveAll(filepath.Join(module, "internal")))
		require.NoError(t, os.WriteFile(filepath.Join(module, "bridge.go"), []byte(replaceOnce(t, bridge, "-lang c,go", "-lang go")), 0o644))
		tooltest.Run(t, module, moduleEnv, commands[0][0], commands[0][1:]...)
		out, err := tooltest.Try(module, moduleEnv, commands[1][0], commands[1][1:]...)
		require.Error(t, err)
		assert.Contains(t, out, "internal/c/dlpack/dlpack.h", "the build names the missing header")
	})
}

// bridgeGuide is docs/go.md's cgo bridge: bridge.go, use.py, and the
// commands of its shell block, each split into words.
func bridgeGuide(t *testing.T) (bridge, use string, commands [][]string) {
	page, err := os.ReadFile(filepath.Join(tooltest.Root(), "docs", "go.md"))
	require.NoError(t, err)
	text := string(page)
	start := strings.Index(text, "\n## A cgo bridge in your own module\n")
	require.GreaterOrEqual(t, start, 0, "docs/go.md has no section on a cgo bridge")
	section := text[start+1:]
	section = section[:strings.Index(section, "\n## ")]
	block := func(lang string) string {
		m := regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(section, -1)
		require.Len(t, m, 1, "the section has one %s block", lang)
		return m[0][1]
	}
	for _, line := range strings.Split(block("sh"), "\n") {
		if words := strings.Fields(strings.Split(line, "#")[0]); len(words) > 0 {
			commands = append(commands, words)
		}
	}
	return block("go"), block("python"), commands
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	require.Equal(t, 1, strings.Count(s, old), "the guide says %q once", old)
	return strings.Replace(s, old, new, 1)
}
