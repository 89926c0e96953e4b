package dlgen_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	_ "github.com/dlgen/dlgen/internal/backend/all"
)

// TestNewLanguageRecipeIsTrue: docs/contributing.md's "Adding a language"
// table has a column for every language -lang selects by default and no
// other, every path it names exists, the checker it names carries its
// marker, the corpus runner reads the corpus, and the manual lists the
// language.
func TestNewLanguageRecipeIsTrue(t *testing.T) {
	page := readText(t, "docs/contributing.md")
	_, section, ok := strings.Cut(page, "\n## Adding a language\n")
	if !ok {
		t.Fatal(`docs/contributing.md has no "Adding a language" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---") {
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		}
	}
	if len(rows) < 2 {
		t.Fatal("the recipe has no table")
	}
	var langs []string
	for _, r := range backend.Registered() {
		if !r.ByNameOnly {
			langs = append(langs, r.Name)
		}
	}
	if got := strings.Join(rows[0][1:], ","); got != strings.Join(langs, ",") {
		t.Fatalf("the recipe's columns are %s; the languages are %s", got, strings.Join(langs, ","))
	}
	path := regexp.MustCompile("`([^`]+)`")
	manual := readText(t, "cmd/dlgen/doc.go")
	for _, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			t.Errorf("recipe row %q has %d cells, not %d", row[0], len(row), len(rows[0]))
			continue
		}
		for i, cell := range row[1:] {
			lang := langs[i]
			for _, m := range path.FindAllStringSubmatch(cell, -1) {
				p := m[1]
				text, err := os.ReadFile(p)
				info, statErr := os.Stat(p)
				switch {
				case statErr != nil:
					t.Errorf("recipe, %s, %s: %v", row[0][:min(len(row[0]), 40)], lang, statErr)
				case info.IsDir():
				case err != nil:
					t.Error(err)
				case strings.HasPrefix(row[0], "the checker") && !strings.Contains(string(text), "dlgen:checker "):
					t.Errorf("recipe: %s (%s) carries no dlgen:checker marker", p, lang)
				case strings.HasPrefix(row[0], "a runner of the conformance corpus") && !strings.Contains(string(text), "corpus"):
					t.Errorf("recipe: %s (%s) does not read the corpus", p, lang)
				}
			}
		}
	}
	usage := regexp.MustCompile(`dlgen \[-lang ([a-z,]+)\]`).FindStringSubmatch(manual)
	if usage == nil || usage[1] != strings.Join(langs, ",") {
		t.Errorf("cmd/dlgen/doc.go's usage line lists %v; the languages are %s", usage, strings.Join(langs, ","))
	}
}
