// Package schema loads and validates a DLPack schema file (YAML) into an
// ir.Schema. The default schema, schema/dlpack.yaml, is embedded (dlgen.Schema).
//
// Loading is strict: unknown keys are rejected at every level, and every
// problem is reported as "file:line:col: message". The file must hold one
// YAML document. Validation covers duplicate names, names reserved in any
// language dlgen writes (the one table ir.ReservedWords(), which every
// backend registered adds its lists to: keywords of C, C++, Go, Python,
// Cython and Rust, C's reserved identifiers, Go's predeclared names,
// ctypes' and enum's attributes, and the names dlgen's output uses
// itself), fields or parameters
// that differ only in case or underscores (one name in Go or Rust), old
// spellings (renamed.from) that clash with another
// name of a release using them, undefined or not-yet-declared type
// references (retyped fields' old types included), enumerator values that
// do not fit their storage type, duplicate enumerator values, malformed
// or out-of-range version tags, missing required keys, and roles: every
// release must have the macros, Python names and flags that backends rely
// on (see ir.Protocol, ir.VersionMacros and ir.FlagsByRole), each role
// played once, and version macros must hold the release's own numbers.
//
// The rules a consumer checks before it touches a foreign tensor are
// validated too (docs/rules.md): holds names an enum or flags group kept
// in the field's type for as long as the field lives; only pointer fields
// are nullable; host_readable, streamless, opaque, bits and dtypes belong to the
// enumerators of the device_type and dtype_code enums; dtype names are
// unique, lower case, of the code's fixed width, and none reads as another
// with lanes (float32x4); a C++ base takes 4 bytes, as C's int; and the
// rules section gives every check of ir.Checks exactly one message, whose
// {placeholders} are parameters of its check.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/ir"
	"gopkg.in/yaml.v3"
)

// DefaultFile is the name under which the embedded schema reports errors.
const DefaultFile = "schema/dlpack.yaml"

// Default returns the embedded schema, loaded and validated.
func Default() (*ir.Schema, error) { return Load(DefaultFile, dlgen.Schema()) }

// DefaultBytes returns the text of the embedded schema.
func DefaultBytes() []byte { return dlgen.Schema() }

// LoadFile reads and loads the schema at path.
func LoadFile(path string) (*ir.Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// ErrorList is every problem found in a schema, in file order.
type ErrorList []*Error

// Error is one problem at a position of a schema file.
type Error struct {
	Pos ir.Pos // where in the schema file
	Msg string // what is wrong there, without the position
}

// Error is the problem as dlgen prints it: file:line:col: message.
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Error is every problem, one per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Load parses and validates a schema; file names it in error messages.
// The error, if any, is an ErrorList.
func Load(file string, data []byte) (*ir.Schema, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return nil, ErrorList{yamlError(file, err)}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		// yaml.Unmarshal would silently drop every document after the first.
		return nil, ErrorList{{Pos: ir.Pos{File: file, Line: next.Line, Col: next.Column}, Msg: "the schema must be one YAML document; a second one starts here"}}
	case err != io.EOF:
		return nil, ErrorList{yamlError(file, err)}
	}
	return loadNode(file, &root)
}

// loadNode is Load after parsing: it decodes and validates a YAML tree.
func loadNode(file string, root *yaml.Node) (*ir.Schema, error) {
	r := &reader{file: file}
	s := r.schema(root)
	if s != nil && len(s.Releases) > 0 {
		r.validate(s)
	}
	if len(r.errs) > 0 {
		sort.SliceStable(r.errs, func(i, j int) bool {
			a, b := r.errs[i].Pos, r.errs[j].Pos
			return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
		})
		return nil, r.errs
	}
	return s, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml.v3 syntax error into a positioned Error.
func yamlError(file string, err error) *Error {
	msg := err.Error()
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	return &Error{Pos: ir.Pos{File: file, Line: line, Col: 1}, Msg: msg}
}

// reader walks the YAML tree, collecting errors instead of stopping at the
// first one.
type reader struct {
	file  string
	errs  ErrorList
	holds []held // fields whose holds: validate resolves
}

func (r *reader) pos(n *yaml.Node) ir.Pos {
	if n == nil || n.Line == 0 { // an empty document has no position; required keys are checked first
		return ir.Pos{File: r.file, Line: 1, Col: 1}
	}
	return ir.Pos{File: r.file, Line: n.Line, Col: n.Column}
}

func (r *reader) errorf(n *yaml.Node, format string, args ...any) {
	r.errs = append(r.errs, &Error{Pos: r.pos(n), Msg: fmt.Sprintf(format, args...)})
}

// mapping checks that n is a mapping whose keys are among keys (a key
// ending in "!" is required) and returns the values by key.
func (r *reader) mapping(n *yaml.Node, what string, keys ...string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		r.errorf(n, "%s must be a mapping", what)
		return nil
	}
	allowed := map[string]bool{}
	for _, k := range keys {
		allowed[strings.TrimSuffix(k, "!")] = true
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			r.errorf(k, "%s has a non-scalar key", what)
		case !allowed[k.Value]:
			r.errorf(k, "unknown key %q in %s (allowed: %s)", k.Value, what, strings.Join(sortedKeys(allowed), ", "))
		case out[k.Value] != nil:
			r.errorf(k, "duplicate key %q in %s", k.Value, what)
		default:
			if v.Kind == yaml.AliasNode {
				r.errorf(v, "YAML aliases are not supported")
				continue
			}
			out[k.Value] = v
		}
	}
	for _, k := range keys {
		if name, ok := strings.CutSuffix(k, "!"); ok && out[name] == nil {
			r.errorf(n, "%s is missing required key %q", what, name)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (r *reader) seq(n *yaml.Node, what string) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.errorf(n, "%s must be a list", what)
		return nil
	}
	return n.Content
}

func (r *reader) str(n *yaml.Node, what string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.errorf(n, "%s must be a string", what)
		return ""
	}
	return n.Value
}

// text reads prose (doc, notes) that backends put into comments and
// docstrings, so it may not end them early or break the build: no "*/"
// (it ends a C comment) or "/*" (-Wcomment, an error under -Werror), no
// triple quote or trailing quote (Python docstrings), no backslash, no
// control character but newline and tab, and no bidirectional control
// (U+202E and the other Trojan Source codepoints, which rustc refuses in a
// comment and which make code read otherwise than it compiles).
func (r *reader) text(n *yaml.Node, what string) string {
	s := r.str(n, what)
	bad := strings.Contains(s, "*/") || strings.Contains(s, "/*") || strings.Contains(s, `"""`) || strings.HasSuffix(s, `"`) || strings.Contains(s, `\`) ||
		strings.ContainsFunc(s, func(c rune) bool { return unicode.IsControl(c) && c != '\n' && c != '\t' })
	if bad {
		r.errorf(n, "%s may not contain /*, */, a triple quote, a backslash or a control character, nor end with a quote: backends put it into comments and docstrings", what)
	}
	if i := strings.IndexFunc(s, func(c rune) bool { return unicode.Is(unicode.Bidi_Control, c) }); i >= 0 {
		c, _ := utf8.DecodeRuneInString(s[i:])
		r.errorf(n, "%s may not contain U+%04X, a bidirectional control: it makes code read otherwise than it compiles, and rustc refuses it in a comment", what, c)
	}
	return s
}

// ident reads a C identifier that names an element of kind, which no list
// of ir.ReservedWords() for kind may hold; n may be nil (an optional key
// left out).
func (r *reader) ident(n *yaml.Node, what string, kind ir.NameKind) string {
	return r.name(n, what, func(s string) []string { return ir.ReservedAs(s, kind) })
}

// pythonIdent reads a Python name (a capsule's, an attribute's: dunder
// names are the protocol's), which only Python's keywords rule out.
func (r *reader) pythonIdent(n *yaml.Node, what string) string {
	return r.name(n, what, func(s string) []string {
		if ir.Keyword("Python", s) {
			return []string{"a keyword of Python"}
		}
		return nil
	})
}

// name reads an identifier that the languages dlgen writes it in must
// take: reserved says why one would not (ir.ReservedWords()).
func (r *reader) name(n *yaml.Node, what string, reserved func(string) []string) string {
	s := r.str(n, what)
	switch {
	case n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null":
	case !isIdent(s):
		r.errorf(n, "%s %q is not a C identifier", what, s)
	default:
		if why := reserved(s); len(why) > 0 {
			r.errorf(n, "%s %q is %s; a schema name must be free in every language dlgen writes", what, s, andList(why))
		}
	}
	return s
}

// andList joins items as "a, b and c".
func andList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func (r *reader) integer(n *yaml.Node, what string) int64 {
	if n == nil {
		return 0
	}
	if n.Kind != yaml.ScalarNode {
		r.errorf(n, "%s must be an integer", what)
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		r.errorf(n, "%s %q is not an integer that fits in 64 bits", what, n.Value)
	}
	return v
}

func (r *reader) boolean(n *yaml.Node, what string) bool {
	if n == nil {
		return false
	}
	switch n.Value {
	case "true":
		return true
	case "false":
		return false
	}
	r.errorf(n, "%s must be true or false", what)
	return false
}

// version reads a release number, or main when the schema lists it.
func (d *decoder) version(n *yaml.Node, what string) ir.Version {
	s := d.str(n, what)
	if n == nil || s == "" {
		return ir.Version{}
	}
	if s == ir.MainName {
		if k := len(d.releases); k > 0 && d.releases[k-1].Main {
			return d.releases[k-1]
		}
		d.errorf(n, "%s: %s is not one of the schema's versions", what, ir.MainName)
		return ir.Version{}
	}
	v, err := ir.ParseVersion(s)
	if err != nil {
		d.errorf(n, "%s: %v", what, err)
	}
	return v
}

var (
	identRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	commitRE = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
)

func isIdent(s string) bool { return identRE.MatchString(s) }
