// Package fuzzstep proves that CI's fuzz step, scripts/fuzz.sh, fails when
// a fuzz target crashes, on a crasher already in the corpus and on one the
// fuzzer finds, and that it keeps a found crasher as a regression seed.
package fuzzstep

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// planted is a module whose fuzz target crashes on inputs starting "dl".
var planted = map[string]string{
	"go.mod": "module planted\n\ngo 1.24\n",
	"planted_test.go": `package planted

import "testing"

func FuzzPlanted(f *testing.F) {
	f.Add([]byte("d"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 2 && b[0] == 'd' && b[1] == 'l' {
			panic("planted crasher")
		}
	})
}
`,
}

func module(t *testing.T, extra map[string]string) string {
	dir := t.TempDir()
	for _, files := range []map[string]string{planted, extra} {
		for name, text := range files {
			path := filepath.Join(dir, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		}
	}
	return dir
}

func fuzzStep(t *testing.T, dir string, env ...string) (string, error) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "fuzz.sh"))
	require.NoError(t, err)
	cmd := exec.Command("bash", script, dir, "FuzzPlanted", "60s", "1s")
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS="), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestFuzzStepFailsOnAKnownCrasher(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module for fuzzing")
	}
	dir := module(t, map[string]string{"testdata/fuzz/FuzzPlanted/known": "go test fuzz v1\n[]byte(\"dlpack\")\n"})
	out, err := fuzzStep(t, dir)
	require.ErrorAs(t, err, new(*exec.ExitError), out)
	assert.Contains(t, out, "planted crasher")
	assert.Contains(t, out, "fuzz: FuzzPlanted failed")
}

func TestFuzzStepFailsOnAFoundCrasherAndKeepsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module for fuzzing")
	}
	dir := module(t, nil)
	out, err := fuzzStep(t, dir)
	require.ErrorAs(t, err, new(*exec.ExitError), out)
	assert.Contains(t, out, "planted crasher")
	assert.Contains(t, out, "fuzz: new crasher "+filepath.Join(dir, "testdata", "fuzz", "FuzzPlanted"))
	seeds, err := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzPlanted"))
	require.NoError(t, err)
	assert.Len(t, seeds, 1, "the crasher is kept as a regression seed")
}

// racedDeadline is a go command whose fuzzing fails as Go's coordinator
// does when it races its own -fuzztime deadline (go.dev/issue/75804):
// "context deadline exceeded", no input written; everything else is the
// real go command.
const racedDeadline = `#!/bin/sh
case "$*" in
*-fuzz=*)
  echo 'fuzz: elapsed: 10s, execs: 321202 (31540/sec), new interesting: 3 (total: 242)'
  echo '--- FAIL: FuzzPlanted (10.15s)'
  echo '    context deadline exceeded'
  echo 'FAIL'
  exit 1;;
esac
exec "$REAL_GO" "$@"
`

// withRacedDeadline is the environment in which go is racedDeadline.
func withRacedDeadline(t *testing.T) []string {
	real, err := exec.LookPath("go")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "go"), []byte(racedDeadline), 0o755))
	return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "REAL_GO=" + real}
}

func TestFuzzStepPassesGosOwnDeadlineRace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module for fuzzing")
	}
	out, err := fuzzStep(t, module(t, nil), withRacedDeadline(t)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "fuzz: FuzzPlanted: Go's fuzzing coordinator raced its own -fuzztime deadline")
}

func TestFuzzStepFailsTheDeadlineRaceWhenTheCorpusFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module for fuzzing")
	}
	dir := module(t, map[string]string{"testdata/fuzz/FuzzPlanted/known": "go test fuzz v1\n[]byte(\"dlpack\")\n"})
	out, err := fuzzStep(t, dir, withRacedDeadline(t)...)
	require.ErrorAs(t, err, new(*exec.ExitError), out)
	assert.Contains(t, out, "fuzz: FuzzPlanted failed")
}
