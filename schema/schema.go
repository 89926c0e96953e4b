// Package schema loads and validates a DLPack schema file (YAML) into an
// ir.Schema. The default schema, dlpack.yaml in this directory, is embedded.
//
// Loading is strict: unknown keys are rejected at every level, and every
// problem is reported as "file:line:col: message". Validation covers
// duplicate names, undefined or not-yet-declared type references (retyped
// fields' old types included), enumerator values that do not fit their
// underlying type, duplicate enumerator values, malformed or out-of-range
// version tags, missing required keys, and roles:
// every release must have the macros and Python names that backends rely
// on (see ir.Protocol and ir.VersionMacros), each role played once, and
// version macros must hold the release's own numbers.
package schema

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/dlgen/dlgen/ir"
	"gopkg.in/yaml.v3"
)

// DefaultFile is the name under which the embedded schema reports errors.
const DefaultFile = "schema/dlpack.yaml"

//go:embed dlpack.yaml
var defaultSchema []byte

// Default returns the embedded schema, loaded and validated.
func Default() (*ir.Schema, error) { return Load(DefaultFile, defaultSchema) }

// DefaultBytes returns the text of the embedded schema.
func DefaultBytes() []byte { return append([]byte(nil), defaultSchema...) }

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
	Pos ir.Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

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
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
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
	file string
	errs ErrorList
}

func (r *reader) pos(n *yaml.Node) ir.Pos {
	if n == nil { // callers check required keys first; this is a last resort
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
// docstrings, so it may not end them early: no "*/" (C), no triple quote
// or trailing quote (Python docstrings), no backslash, no control
// character but newline and tab.
func (r *reader) text(n *yaml.Node, what string) string {
	s := r.str(n, what)
	bad := strings.Contains(s, "*/") || strings.Contains(s, `"""`) || strings.HasSuffix(s, `"`) || strings.Contains(s, `\`) ||
		strings.ContainsFunc(s, func(c rune) bool { return unicode.IsControl(c) && c != '\n' && c != '\t' })
	if bad {
		r.errorf(n, "%s may not contain */, a triple quote, a backslash or a control character, nor end with a quote: backends put it into comments and docstrings", what)
	}
	return s
}

// ident reads a C identifier; n may be nil (an optional key left out).
func (r *reader) ident(n *yaml.Node, what string) string {
	s := r.str(n, what)
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null" && !isIdent(s) {
		r.errorf(n, "%s %q is not a C identifier", what, s)
	}
	return s
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

func (r *reader) version(n *yaml.Node, what string) ir.Version {
	s := r.str(n, what)
	if n == nil || s == "" {
		return ir.Version{}
	}
	v, err := ir.ParseVersion(s)
	if err != nil {
		r.errorf(n, "%s: %v", what, err)
	}
	return v
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isIdent(s string) bool { return identRE.MatchString(s) }
