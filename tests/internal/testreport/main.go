// Command testreport reads `go test -json` on its standard input and writes
// what plain `go test` would show (each package's ok or FAIL line, the
// output of failed tests, what tests print themselves), then every skipped
// test with its reason. It exits 1 when a test failed or when a test
// skipped that the list of expected skips does not name: CI passes only on
// checks that ran.
//
//	go test -json ./... | go run ./tests/internal/testreport tests/expected-skips.txt
//
// The list holds one skip a line, `SUITE TEST | REASON`, where SUITE is go
// or python, TEST is package.TestName (a pytest node id for python) and
// REASON the words of its skip; * in TEST and REASON matches any text. Lines
// starting with # are comments.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Skip is a skipped test and its reason.
type Skip struct {
	Test   string // package.TestName, subtests included
	Reason string // the words it skipped with
}

// Expected is one line of the list of expected skips.
type Expected struct{ test, reason *regexp.Regexp }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ./... | testreport EXPECTED-SKIPS-FILE")
		os.Exit(2)
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	expected, err := ParseExpected(string(text), "go")
	if err != nil {
		fmt.Fprintf(os.Stderr, "testreport: %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	failed, skips, err := Render(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	unexpected := Summarise(os.Stdout, skips, expected)
	if failed || unexpected > 0 {
		os.Exit(1)
	}
}

// ParseExpected reads the lines of the list for suite.
func ParseExpected(text, suite string) ([]Expected, error) {
	var list []Expected
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, rest, _ := strings.Cut(line, " ")
		test, reason, ok := strings.Cut(rest, " | ")
		if !ok || (s != "go" && s != "python") {
			return nil, fmt.Errorf("line %d: %q is not `go|python TEST | REASON`", i+1, line)
		}
		if s == suite {
			list = append(list, Expected{glob(strings.TrimSpace(test)), glob(strings.TrimSpace(reason))})
		}
	}
	return list, nil
}

// glob is the pattern's regexp: * matches any text, all else itself.
func glob(pattern string) *regexp.Regexp {
	return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$")
}

// framing matches the lines -json adds to what plain go test shows.
var framing = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP): )`)

// logLine matches a t.Log line: indented, file.go:line: words.
var logLine = regexp.MustCompile(`^\s+\S+\.go:\d+: ?(.*)$`)

// Render writes what plain go test shows of the events on r and returns
// whether any test or package failed, and the skipped tests.
func Render(r io.Reader, w io.Writer) (bool, []Skip, error) {
	held := map[string][]string{} // a running test's output, by package and test
	var skips []Skip
	failed := false
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var e event
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			return failed, skips, err
		}
		key := e.Package + "." + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Test == "": // the package's own lines and verdict
			if e.Action == "output" && e.Output != "PASS\n" && !framing.MatchString(e.Output) {
				fmt.Fprint(w, e.Output)
			}
			failed = failed || e.Action == "fail"
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
		case e.Action == "fail":
			failed = true
			for _, l := range held[key] {
				if !framing.MatchString(l) {
					fmt.Fprint(w, l)
				}
			}
			delete(held, key)
		case e.Action == "pass" || e.Action == "skip":
			var reason []string
			for _, l := range held[key] {
				switch m := logLine.FindStringSubmatch(strings.TrimRight(l, "\n")); {
				case m != nil:
					reason = append(reason, m[1])
				case !framing.MatchString(l) && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t"):
					fmt.Fprint(w, l) // what the test printed itself
				}
			}
			if e.Action == "skip" {
				skips = append(skips, Skip{Test: key, Reason: strings.Join(reason, "; ")})
			}
			delete(held, key)
		}
	}
	return failed, skips, nil
}

// Summarise lists the skips, marks those the list does not expect, and
// returns how many those are.
func Summarise(w io.Writer, skips []Skip, expected []Expected) int {
	sort.Slice(skips, func(i, j int) bool { return skips[i].Test < skips[j].Test })
	unexpected := 0
	fmt.Fprintf(w, "== skipped Go tests: %d\n", len(skips))
	for _, s := range skips {
		mark := ""
		if !Allowed(s, expected) {
			mark, unexpected = "  <- not in tests/expected-skips.txt: a check CI must run did not", unexpected+1
		}
		fmt.Fprintf(w, "%s: %s%s\n", s.Test, s.Reason, mark)
	}
	if unexpected > 0 {
		fmt.Fprintf(w, "FAIL: %d Go tests skipped that must run\n", unexpected)
	}
	return unexpected
}

// Allowed reports whether the list expects skip.
func Allowed(s Skip, expected []Expected) bool {
	for _, e := range expected {
		if e.test.MatchString(s.Test) && e.reason.MatchString(s.Reason) {
			return true
		}
	}
	return false
}
