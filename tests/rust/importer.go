package rust

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/runtime/conformance/corpus"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// The importer (importer.rs): a program over the crate of the newest
// release (the Go runtime's and the corpus's, never the main branch) that
// makes managed tensors as a C producer would, imports them with the safe
// layer and prints its verdicts, for the conformance corpus and for the
// comparison with the Go runtime.

// Verdict is what an importer concluded on one tensor, and how often the
// producer's deleter ran.
type Verdict struct {
	Accept bool // the tensor was accepted
	// CallsBefore counts the deleter's calls before an accepted tensor was
	// released; Calls, after it (or after the refusal).
	CallsBefore, Calls int
	// Read is, for an accepted tensor whose elements were read, how many
	// bytes; "-" when none were, "outside" when one lay outside its buffer.
	Read          string
	Rule, Message string // for a refusal; Rule is "-" for none
}

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
func (im Importer) Run(t *testing.T, tensors []corpus.Tensor) []Verdict {
	t.Helper()
	input := make([]string, len(tensors))
	for i, tensor := range tensors {
		input[i] = tensor.Line()
	}
	lines := im.lines(t, "importer", input)
	verdicts := make([]Verdict, len(lines))
	for i, l := range lines {
		v, err := parseVerdict(l)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		verdicts[i] = v
	}
	return verdicts
}

// parseVerdict reads a line importer.rs prints.
func parseVerdict(line string) (Verdict, error) {
	f := strings.SplitN(line, " ", 4)
	number := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	switch {
	case len(f) == 4 && f[0] == "accept":
		return Verdict{Accept: true, CallsBefore: number(f[1]), Calls: number(f[2]), Read: f[3]}, nil
	case len(f) == 4 && f[0] == "refuse":
		return Verdict{Calls: number(f[1]), Rule: f[2], Message: f[3]}, nil
	}
	return Verdict{}, fmt.Errorf("not a verdict: %q", line)
}
