package python

import (
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/schema"
)

// release is one release's generated files, each split in two: what its
// template declares, and the hand-written sources that go with it.
type release struct {
	version string
	files   map[hosts]split
}

type split struct {
	declared string   // the template's output without sources or includes
	sources  []string // the hand-written sources' text as the file holds them
}

// releases renders every release of the default schema as split files.
func releases(t *testing.T) []release {
	t.Helper()
	s, err := schema.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out []release
	for _, r := range s.Releases {
		v, err := Backend{Schema: "s.yaml"}.view(s.At(r.Version))
		if err != nil {
			t.Fatal(err)
		}
		pages, err := ctypesFiles(v)
		if err != nil {
			t.Fatal(err)
		}
		var shipped map[string]string
		if v.Versioned {
			cython, copies, err := cythonFiles(v)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, cython...)
			shipped = map[string]string{}
			for _, c := range copies {
				shipped[strings.TrimPrefix(c.Path, Dir+"/")] = string(c.Content)
			}
		}
		rel := release{version: r.Version.String(), files: map[hosts]split{}}
		for _, f := range pages {
			kind, ok := kinds[f.path]
			if !ok {
				continue // dlpack.pxd: declarations only
			}
			sp := split{sources: f.page.Sources}
			for _, inc := range f.page.Includes {
				sp.sources = append(sp.sources, shipped[inc])
			}
			f.page.Sources, f.page.Includes = nil, nil
			text, err := f.render()
			if err != nil {
				t.Fatal(err)
			}
			sp.declared = string(text)
			prev := rel.files[kind]
			rel.files[kind] = split{declared: prev.declared + sp.declared, sources: append(prev.sources, sp.sources...)}
		}
		out = append(out, rel)
	}
	return out
}

// kinds are the generated files the table speaks of.
var kinds = map[string]hosts{
	"dlpack_ctypes.py":  ctypesModule,
	"dlpack_ctypes.pyi": ctypesStub,
	"dlpack_cython.pyx": cythonModule,
	"dlpack_cython.pxd": cythonModule,
	"dlpack_cython.pyi": cythonStub,
}

var (
	// codeNoise is what is not code: comments and string literals, but for
	// the {expressions} of f-strings.
	codeNoise = regexp.MustCompile(`(?s)#[^\n]*|(?:\b[rRbBuUfF]{1,2})?(?:"""(?:\\.|[^\\])*?"""|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')`)
	fieldExpr = regexp.MustCompile(`\{[^{}]*\}`)
	word      = regexp.MustCompile(`[A-Za-z_]\w*`)
	// A name the declarations bind at the top level (or in a top-level
	// if/else, as _LAYOUT is).
	declaration = regexp.MustCompile(`^(?:class (\w+)\b.*|(\w+)(?:: [^=]*| = .*)|cdef [^=]*?\b(\w+) = .*|(?:from \. )?cimport (\w+))$`)
	// A public name a source defines at the top level.
	publicDef = regexp.MustCompile(`(?m)^(?:(?:def|class|cdef class) ([A-Za-z]\w*)\b|([A-Za-z]\w*)(?:: [^=\n]*| = .*)$)`)
)

// used returns the identifiers of a source's code.
func used(src string) map[string]bool {
	code := codeNoise.ReplaceAllStringFunc(src, func(m string) string {
		if i := strings.IndexAny(m, `"'`); i > 0 && strings.ContainsAny(m[:i], "fF") {
			return " " + strings.Join(fieldExpr.FindAllString(m, -1), " ") + " "
		}
		return " "
	})
	names := map[string]bool{}
	for _, n := range word.FindAllString(code, -1) {
		names[n] = true
	}
	return names
}

// declared returns the names the declarations of a file bind.
func declared(text string) map[string]bool {
	names := map[string]bool{}
	conditional := false
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			conditional = strings.HasPrefix(line, "if ") || strings.HasPrefix(line, "elif ") || line == "else:"
		} else if conditional && strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     ") {
			line = line[4:]
		} else {
			continue
		}
		if m := declaration.FindStringSubmatch(line); m != nil {
			names[m[1]+m[2]+m[3]+m[4]] = true
		}
	}
	return names
}

func table(hs []handover, kind hosts) map[string]bool {
	names := map[string]bool{}
	for _, h := range hs {
		if h.In&kind != 0 {
			names[h.Name] = true
		}
	}
	return names
}

// TestHandoverListsEveryNameTheDeclarationsGiveTheSources: in every
// release and file, the names the declarations bind that its hand-written
// sources use are exactly the table's, and each name of the table crosses
// in some release.
func TestHandoverListsEveryNameTheDeclarationsGiveTheSources(t *testing.T) {
	crossed := map[string]hosts{}
	for _, r := range releases(t) {
		for kind, f := range r.files {
			defined, listed := declared(f.declared), table(declarations, kind)
			uses := map[string]bool{}
			for _, src := range f.sources {
				for n := range used(src) {
					uses[n] = true
				}
			}
			for n := range uses {
				switch {
				case defined[n] && !listed[n]:
					t.Errorf("v%s %s: the sources use %s, which the declarations define and handover.go does not list", r.version, kindName(kind), n)
				case defined[n]:
					crossed[n] |= kind
				case listed[n]:
					t.Errorf("v%s %s: the sources use %s, which the declarations do not define", r.version, kindName(kind), n)
				}
			}
		}
	}
	for _, h := range declarations {
		if crossed[h.Name] != h.In {
			t.Errorf("handover.go: %s is listed for %s, and crosses in %s", h.Name, kindName(h.In), kindName(crossed[h.Name]))
		}
	}
}

// TestPublicNamesAreDefinedByTheSourcesOnce: each public name of the
// table is defined by the sources of every versioned release's module and
// stub, and the sources define no other public name.
func TestPublicNamesAreDefinedByTheSourcesOnce(t *testing.T) {
	stubOf := map[hosts]hosts{ctypesModule: ctypesStub, cythonModule: cythonStub}
	for _, r := range releases(t) {
		for kind, f := range r.files {
			module := kind
			for m, stub := range stubOf {
				if stub == kind {
					module = m
				}
			}
			want := map[string]bool{}
			// a versioned release; one before 1.0 lists the names it lacks in _PROTOCOL_NAMES
			if strings.Contains(f.declared, `"Tensor",`) && !strings.Contains(f.declared, "_PROTOCOL_NAMES") {
				want = table(publicNames, module)
			}
			got := map[string]bool{}
			for _, src := range f.sources {
				for _, m := range publicDef.FindAllStringSubmatch(src, -1) {
					got[m[1]+m[2]] = true
				}
			}
			if a, b := keys(want), keys(got); a != b {
				t.Errorf("v%s %s: the sources define %s; handover.go lists %s", r.version, kindName(kind), b, a)
			}
		}
	}
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func kindName(k hosts) string {
	var names []string
	for path, kind := range kinds {
		if k&kind != 0 && !strings.HasSuffix(path, ".pxd") {
			names = append(names, path)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "no file"
	}
	return strings.Join(names, ", ")
}

func TestUsedSeesCodeNotCommentsOrStrings(t *testing.T) {
	src := "x = a  # b\ny = \"c\" + 'd' + \"\"\"e\nf\"\"\" + f\"{g!r} h\" + rb'i'\n"
	if got := keys(used(src)); got != "a g r x y" {
		t.Errorf("used = %s", got)
	}
}

func TestDeclaredSeesTopLevelNamesAndConditionalOnes(t *testing.T) {
	text := "A = 1\nclass B(x):\n    c = 2\nif p:\n    D = [\n        (e, 1),\n    ]\nelse:\n    D = []\n" +
		"cdef const char* _E = \"x\"\nF: int\ncimport dlpack\nfrom . cimport dlpack\n"
	if got := keys(declared(text)); got != "A B D F _E dlpack" {
		t.Errorf("declared = %s", got)
	}
}

// TestRulesPyStatesTheNamesItReads: rules.py, read alone, names in its
// opening comment every name of the declarations it reads (the line after
// "Names this file reads and never defines"), and no other.
func TestRulesPyStatesTheNamesItReads(t *testing.T) {
	src, err := fs.ReadFile(sources, "rules.py")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "# Names this file reads and never defines")
	if !ok {
		t.Fatal("rules.py's opening comment names no names it reads")
	}
	var stated []string
	for _, line := range strings.Split(after, "\n")[1:] {
		if names, ok := strings.CutPrefix(line, "#   "); ok {
			stated = strings.Fields(names)
			break
		}
		if !strings.HasPrefix(line, "#") {
			break
		}
	}
	listed := table(declarations, modules)
	var reads []string
	for n := range used(string(src)) {
		if listed[n] {
			reads = append(reads, n)
		}
	}
	sort.Strings(reads)
	sorted := append([]string(nil), stated...)
	sort.Strings(sorted)
	if strings.Join(sorted, " ") != strings.Join(reads, " ") {
		t.Errorf("rules.py states it reads %v and reads %v of the declarations", stated, reads)
	}
}
