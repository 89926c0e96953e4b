package names

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
)

// syntax is what a tokenizer of one language needs to skip comments and
// literals: identifiers are what is left.
type syntax struct {
	line   string // a line comment's start
	block  bool   // /* */ comments (nested in Rust: they close one level each)
	python bool   // Python's string prefixes, triple quotes and f-strings
	rust   bool   // raw strings, and lifetimes beside char literals
}

var (
	cSyntax      = syntax{line: "//", block: true}
	pythonSyntax = syntax{line: "#", python: true}
	rustSyntax   = syntax{line: "//", block: true, rust: true}
)

func identStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func identPart(c byte) bool { return identStart(c) || '0' <= c && c <= '9' }

// identifiers lists the identifiers of src, in order, outside comments
// and string and character literals (an f-string's fields are code), and
// outside the <file> of a C #include.
func (s syntax) identifiers(src string) []string {
	var out []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], s.line):
			i += strings.IndexByte(src[i:]+"\n", '\n')
		case s.block && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case !s.python && !s.rust && strings.HasPrefix(src[i:], "#include"):
			i += strings.IndexByte(src[i:]+"\n", '\n')
		case c == '"' || c == '\'' && !s.rust:
			i = s.literal(src, i, "", &out)
		case c == '\'': // Rust: a char literal, or a lifetime
			if j := i + 1; j+1 < len(src) && (src[j] == '\\' || src[j+1] == '\'' || src[j] >= 0x80) {
				i = s.literal(src, i, "", &out)
			} else {
				i++
			}
		case '0' <= c && c <= '9':
			for i < len(src) && identPart(src[i]) {
				i++
			}
		case identStart(c):
			j := i
			for j < len(src) && identPart(src[j]) {
				j++
			}
			word := src[i:j]
			switch {
			case j < len(src) && (src[j] == '"' || src[j] == '\'' && s.python) && s.prefix(word):
				i = s.literal(src, j, strings.ToLower(word), &out)
			case s.rust && (word == "r" || word == "br") && j < len(src) && src[j] == '#' && strings.HasPrefix(strings.TrimLeft(src[j:], "#"), `"`):
				hashes := len(src[j:]) - len(strings.TrimLeft(src[j:], "#"))
				closing := `"` + strings.Repeat("#", hashes)
				start := j + hashes + 1
				end := strings.Index(src[start:], closing)
				if end < 0 {
					return out
				}
				i = start + end + len(closing)
			default:
				out = append(out, word)
				i = j
			}
		default:
			i++
		}
	}
	return out
}

// prefix reports whether word prefixes a string literal: Python's r, b,
// u, f and their pairs, Rust's b and r.
func (s syntax) prefix(word string) bool {
	switch {
	case s.python:
		return len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbuf") == ""
	case s.rust:
		return word == "b" || word == "r" || word == "br"
	}
	return word == "L" || word == "u" || word == "U" || word == "u8"
}

// literal skips the string or character literal opening at src[i] (a
// quote) with prefix (lower case) and returns the index after it; the
// fields of a Python f-string go to out as code.
func (s syntax) literal(src string, i int, prefix string, out *[]string) int {
	quote := src[i : i+1]
	if s.python && strings.HasPrefix(src[i:], strings.Repeat(quote, 3)) {
		quote = strings.Repeat(quote, 3)
	}
	raw := strings.Contains(prefix, "r")
	j := i + len(quote)
	start := j
	for j < len(src) && !strings.HasPrefix(src[j:], quote) {
		if src[j] == '\\' && !raw {
			j++
		}
		j++
	}
	if strings.Contains(prefix, "f") && j <= len(src) {
		*out = append(*out, s.identifiers(fstringFields(src[start:min(j, len(src))]))...)
	}
	return j + len(quote)
}

// fstringFields is the code of an f-string's body: the text inside its single
// braces, each field on a line of its own.
func fstringFields(body string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case depth == 0 && (strings.HasPrefix(body[i:], "{{") || strings.HasPrefix(body[i:], "}}")):
			i++
		case c == '{':
			depth++
			if depth > 1 {
				b.WriteByte(c)
			}
		case c == '}' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(c)
			}
		case depth > 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// schemaNames lists every name s gives anything, in any release: the
// schema's and header guard's, every declaration's, tag, field,
// enumerator, flag, macro, parameter and old spelling, and the Python
// names.
func schemaNames(s *ir.Schema) map[string]bool {
	names := map[string]bool{s.Name: true, s.HeaderGuard: true}
	sig := func(sig *ir.Signature) {}
	typ := func(t *ir.Type) {
		t.Walk(func(t *ir.Type) {
			if t.Sig != nil {
				sig(t.Sig)
			}
		})
	}
	sig = func(g *ir.Signature) {
		typ(g.Returns)
		for _, p := range g.Params {
			names[p.Name] = true
			typ(p.Type)
		}
	}
	for _, m := range s.Macros {
		names[m.Name] = true
	}
	for _, d := range s.Decls {
		names[d.DeclName()] = true
		switch d := d.(type) {
		case *ir.Struct:
			names[d.Tag] = true
			for _, f := range d.Fields {
				names[f.Name] = true
				typ(f.Type)
			}
		case *ir.Enum:
			for _, e := range d.Values {
				names[e.Name] = true
				if e.Renamed != nil {
					names[e.Renamed.From] = true
				}
			}
		case *ir.Flags:
			for _, b := range d.Bits {
				names[b.Name] = true
			}
		case *ir.FuncType:
			sig(d.Sig)
		}
	}
	for _, p := range s.Python {
		names[p.Name] = true
		if p.Renamed != nil {
			names[p.Renamed.From] = true
		}
	}
	delete(names, "")
	return names
}

func TestIdentifiersSkipCommentsAndLiterals(t *testing.T) {
	for _, c := range []struct {
		syntax syntax
		src    string
		want   []string
	}{
		{cSyntax, "#include <stdint.h>\n/* int skipped */ int64_t a = 1UL; // b\nchar c = 'd'; const char* e = \"f \\\" g\";", []string{"int64_t", "a", "char", "c", "const", "char", "e"}},
		{pythonSyntax, "import sys  # os\nx = rb'y' + \"\"\"z\n w\"\"\" + f\"{len(v)!r:>{width}} {{q}}\"", []string{"import", "sys", "x", "len", "v", "r", "width"}},
		{rustSyntax, "fn f<'a>(s: &'a str) -> char { /* g */ let r = r#\"h\"#; 'c' } // i\nconst B: &[u8] = b\"j\";", []string{"fn", "f", "a", "s", "a", "str", "char", "let", "r", "const", "B", "u8"}},
	} {
		assert.Equal(t, c.want, c.syntax.identifiers(c.src), c.src)
	}
}
