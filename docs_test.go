package dlgen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dlgen/dlgen"
)

// The README is a front page: short, and it opens with the commands that
// work on a fresh machine: dlgen, the quick tests a newcomer runs first, and
// the whole suite.
const (
	readmeMaxLines = 200
	mainCommand    = "go run ./cmd/dlgen -out out"
	checkCommand   = "make check"
	testCommand    = "make test"
)

func TestReadmeIsAFrontPage(t *testing.T) {
	text := readText(t, "README.md")
	// The markers of tests/python/test_docs_snippets.py are not shown.
	lines := slices.DeleteFunc(strings.Split(strings.TrimSuffix(text, "\n"), "\n"), func(l string) bool {
		return strings.HasPrefix(strings.TrimSpace(l), "<!-- snippet: ")
	})
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md shows %d lines; at most %d (the rest belongs in docs/)", len(lines), readmeMaxLines)
	}
	// Only the title comes before the first code block.
	first := slices.IndexFunc(lines, func(l string) bool { return fence(l) != "" })
	if first < 0 {
		t.Fatal("README.md has no fenced code block")
	}
	for _, l := range lines[:first] {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "# ") {
			t.Errorf("README.md says %q before its first code block, which must come first", l)
		}
	}
	var commands []string
	for _, l := range lines[first+1:] {
		if fence(l) != "" {
			break
		}
		if cmd, _, _ := strings.Cut(l, " #"); strings.TrimSpace(cmd) != "" {
			commands = append(commands, strings.Join(strings.Fields(cmd), " "))
		}
	}
	if want := []string{mainCommand, checkCommand, testCommand}; !slices.Equal(commands, want) {
		t.Errorf("README.md's first code block runs %q; want exactly %q", commands, want)
	}
}

// Every relative link of the user documentation leads to a file of the
// repository, and every #anchor to a heading of its page, as GitHub renders
// them.
func TestDocumentationLinksResolve(t *testing.T) {
	for _, page := range documentationPages(t) {
		for _, l := range links(readText(t, page)) {
			if regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(l.target) {
				continue // https:, mailto:
			}
			path, anchor, _ := strings.Cut(l.target, "#")
			target := page
			if path != "" {
				target = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				if rel, err := filepath.Rel(".", target); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d: link %q leaves the repository", page, l.line, l.target)
					continue
				}
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: link %q: no file %s", page, l.line, l.target, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", page, l.line, l.target)
				continue
			}
			if !slices.Contains(anchors(readText(t, target)), anchor) {
				t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s (it has %v)", page, l.line, l.target, target, anchor, anchors(readText(t, target)))
			}
		}
	}
}

// User documentation says what is, not how it came to be: no issue or
// pull-request numbers (history is CHANGELOG.md's).
func TestDocumentationNamesNoIssues(t *testing.T) {
	issue := regexp.MustCompile(`(?i)\b(issue|pull request|PR)s?\s+#?\d+|(^|[\s(\[,])#\d+\b`)
	for _, page := range documentationPages(t) {
		for i, line := range strings.Split(readText(t, page), "\n") {
			if m := issue.FindString(line); m != "" {
				t.Errorf("%s:%d: %q names an issue: say what is, and leave history to CHANGELOG.md", page, i+1, strings.TrimSpace(m))
			}
		}
	}
}

// The documentation pins this release of dlgen wherever it tells how to get
// it (go run ...@vX.Y.Z, a pre-commit rev, pip's ==X.Y.Z, the conformance
// kit's action @vX.Y.Z and wheel), and never
// @latest, in the README, the docs and the manual.
func TestDocumentationPinsThisRelease(t *testing.T) {
	pin := regexp.MustCompile(`dlgen/cmd/dlgen@v(\d[\w.-]*)|\brev: v(\d[\w.-]*)|\b(?:dlgen|dlpack-conformance)==(\d[\w.-]*)|` +
		`dlgen/dlgen/conformance@v(\d[\w.-]*)|dlpack_conformance-(\d[\w.-]*)-py3`)
	for _, page := range append(documentationPages(t), "cmd/dlgen/doc.go") {
		for i, line := range strings.Split(readText(t, page), "\n") {
			if strings.Contains(line, "dlgen/cmd/dlgen@latest") {
				t.Errorf("%s:%d: %q does not pin dlgen; pin @v%s", page, i+1, line, dlgen.Version)
			}
			for _, m := range pin.FindAllStringSubmatch(line, -1) {
				if v := m[1] + m[2] + m[3] + m[4] + m[5]; v != dlgen.Version {
					t.Errorf("%s:%d: %q pins dlgen %s; this release is %s", page, i+1, m[0], v, dlgen.Version)
				}
			}
		}
	}
}

// Every recipe that vendors the Python modules into a package (an -out
// ending in _vendor) names the package with -python-package: without it, the
// Cython module claims the top-level name dlpack_cython.
func TestPythonVendoringRecipesNameThePackage(t *testing.T) {
	vendoring := regexp.MustCompile(`-lang,? python\b.*_vendor\b`)
	for _, page := range append(documentationPages(t), "examples/framework/README.md") {
		for i, line := range strings.Split(readText(t, page), "\n") {
			if vendoring.MatchString(line) && !strings.Contains(line, "-python-package") {
				t.Errorf("%s:%d: vendors the Python modules without -python-package: %s", page, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// documentationPages are README.md and every Markdown file under docs/.
func documentationPages(t *testing.T) []string {
	pages := []string{"README.md"}
	err := filepath.WalkDir("docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fence returns the fence that opens or closes a code block on line (``` or
// ~~~, indented or not), or "".
func fence(line string) string {
	l := strings.TrimLeft(line, " \t")
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(l, f) {
			return f
		}
	}
	return ""
}

// prose calls f with every line outside fenced code blocks.
func prose(text string, f func(n int, line string)) {
	open := ""
	for i, line := range strings.Split(text, "\n") {
		if fc := fence(line); fc != "" && (open == "" || fc == open) {
			if open == "" {
				open = fc
			} else {
				open = ""
			}
			continue
		}
		if open == "" {
			f(i+1, line)
		}
	}
}

var (
	codeSpan   = regexp.MustCompile("`[^`]*`")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	heading    = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
)

type link struct {
	line   int
	target string
}

func links(text string) []link {
	var out []link
	prose(text, func(n int, line string) {
		line = codeSpan.ReplaceAllString(line, "``")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{n, m[1]})
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, link{n, m[1]})
		}
	})
	return out
}

// anchors are the ids GitHub gives the headings of a Markdown page: the
// heading's text lower-cased, punctuation but - and _ dropped, spaces made
// hyphens, and -1, -2, ... after repeats.
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	prose(strings.ReplaceAll(text, "\r", ""), func(_ int, line string) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		title := inlineLink.ReplaceAllStringFunc(m[1], func(s string) string { return s[strings.Index(s, "[")+1 : strings.LastIndex(s, "]")] })
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			seen[id] = n + 1
			id = fmt.Sprintf("%s-%d", id, n)
		} else {
			seen[id] = 1
		}
		out = append(out, id)
	})
	return out
}

// checkerMarker is the comment every checker of the rules carries in its
// source: dlgen:checker NAME.
var checkerMarker = regexp.MustCompile(`^\s*(?://[/!]?|#|/\*|\{\{/\*)\s*dlgen:checker ([a-z0-9-]+)\b`)

// checkerSources are the folders of hand-written code; generated output
// and its copies repeat the markers of the sources they come from.
var checkerSources = []string{"internal/backend", "runtime", "examples/gobridge"}

// TestRulesPageNamesEveryChecker: docs/rules.md's table of checkers has a
// row for every marked checker, naming its file, and no row without one.
func TestRulesPageNamesEveryChecker(t *testing.T) {
	marked := map[string]string{} // name: file
	for _, root := range checkerSources {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			for _, line := range strings.Split(readText(t, path), "\n") {
				if m := checkerMarker.FindStringSubmatch(line); m != nil {
					if other, ok := marked[m[1]]; ok {
						t.Errorf("checker %s is marked in %s and in %s", m[1], other, path)
					}
					marked[m[1]] = filepath.ToSlash(path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(marked) == 0 {
		t.Fatal("no source carries a dlgen:checker marker")
	}
	rows := map[string]string{} // name: the rest of its row
	page := readText(t, "docs/rules.md")
	_, section, _ := strings.Cut(page, "\n## Every checker\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, line := range strings.Split(section, "\n") {
		if m := regexp.MustCompile("^\\| `([a-z0-9-]+)` \\|(.*)$").FindStringSubmatch(line); m != nil {
			rows[m[1]] = m[2]
		}
	}
	for name, file := range marked {
		row, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("%s carries checker %s, which docs/rules.md's \"Every checker\" table does not name", file, name)
		case !strings.Contains(row, "`"+file+"`"):
			t.Errorf("docs/rules.md's row for checker %s does not name its file `%s`", name, file)
		}
	}
	for name := range rows {
		if _, ok := marked[name]; !ok {
			t.Errorf("docs/rules.md names checker %s, which no source marks with dlgen:checker %s", name, name)
		}
	}
}
