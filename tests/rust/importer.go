package rust

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/tests/internal/corpustest"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// The importer (importer.rs): a program over the crate of the newest
// release (the Go runtime's and the corpus's, never the main branch) that
// makes managed tensors as a C producer would, imports them with the safe
// layer and prints its verdicts, for the conformance corpus and for the
// comparison with the Go runtime.

// Importer runs a program of tests/rust (importer.rs, dtypes.rs) over the
// newest release's crate: for a Rust target ("" for the host), with the
// environment it needs, or under Miri.
type Importer struct {
	Target string   // a Rust target triple, "" for the host
	Env    []string // more environment the program needs
	Miri   bool     // run under Miri
}

// lines runs the program name.rs with input on stdin, one request a
// line, and returns its output, one answer a line.
func (im Importer) lines(t *testing.T, name string, input []string) []string {
	t.Helper()
	s, _ := Releases(t)
	src, err := os.ReadFile(filepath.Join(tooltest.Root(), "tests", "rust", name+".rs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := Probe(t, Crate(t, s, s.Newest()), name, src)
	args := []string{"run", "--quiet", "--features", "safe", "--bin", name}
	if im.Miri {
		args = append([]string{"+" + Nightly(t), "miri"}, args...)
	}
	if im.Target != "" {
		args = append(args, "--target", im.Target)
	}
	cmd := exec.Command(Cargo(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), Env()...), im.Env...)
	cmd.Stdin = strings.NewReader(strings.Join(input, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cargo %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != len(input) {
		t.Fatalf("%s: %d answers to %d requests:\n%s", name, len(lines), len(input), stdout.String())
	}
	return lines
}

// Run imports every tensor with the crate (importer.rs) and returns one
// verdict each.
func (im Importer) Run(t *testing.T, tensors []corpus.Tensor) []corpustest.Verdict {
	t.Helper()
	input := make([]string, len(tensors))
	for i, tensor := range tensors {
		input[i] = tensor.Line()
	}
	lines := im.lines(t, "importer", input)
	verdicts := make([]corpustest.Verdict, len(lines))
	for i, l := range lines {
		v, err := corpustest.Parse(l)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		verdicts[i] = v
	}
	return verdicts
}
