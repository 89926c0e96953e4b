package golang

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withDecl is the default schema with yaml, one declaration, added after
// the others, and the line it starts on.
func withDecl(t *testing.T, yaml string) ([]byte, int) {
	t.Helper()
	src := string(schema.DefaultBytes())
	i := strings.Index(src, "\npython:")
	require.Positive(t, i)
	return []byte(src[:i+1] + yaml + src[i+1:]), strings.Count(src[:i+1], "\n") + 1
}

// refusal loads src and renders the Go package of its newest release, and
// returns the first error: the loader's (a schema.ErrorList) or the
// backend's (a *backend.Error).
func refusal(src []byte) error {
	s, err := schema.Load("names.yaml", src)
	if err != nil {
		return err
	}
	_, err = Backend{Schema: "names.yaml"}.Generate(s.At(s.Newest()))
	return err
}

// lines are the schema lines err names.
func lines(err error) []int {
	var refused *backend.Error
	if errors.As(err, &refused) {
		return []int{refused.Pos.Line}
	}
	var out []int
	if list, ok := err.(schema.ErrorList); ok {
		for _, e := range list {
			out = append(out, e.Pos.Line)
		}
	}
	return out
}

// generated is the Go package of the embedded schema's newest release.
func generated(t *testing.T) []backend.File {
	s, err := schema.Default()
	require.NoError(t, err)
	files, err := Backend{}.Generate(s.At(s.Newest()))
	require.NoError(t, err)
	return files
}

// TestGoNamesDlgenWritesAreRefusedAtTheDeclaration: a struct whose Go
// name is any name the Go package declares at top level (Tensor,
// MaxDims, Nullable, NullWhen, Rule, ParseDataType...) or imports
// (strconv, unsafe) is refused at the struct's own position, never at
// line 0 or at the rules section.
func TestGoNamesDlgenWritesAreRefusedAtTheDeclaration(t *testing.T) {
	files := generated(t)
	declared := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		file, err := parser.ParseFile(fset, f.Path, f.Content, 0)
		require.NoError(t, err)
		for name, obj := range file.Scope.Objects {
			if obj.Kind != ast.Bad && name != "_" {
				declared[name] = true
			}
		}
		for _, imp := range file.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			declared[path.Base(p)] = true
		}
	}
	require.Contains(t, declared, "Nullable")
	for name := range declared {
		src, line := withDecl(t, fmt.Sprintf("  - struct: DL%s\n    since: \"1.0\"\n    doc: Takes a name the Go package has.\n    fields:\n      - {name: a, type: int32_t, since: \"1.0\", doc: \"A.\"}\n", name))
		err := refusal(src)
		if !assert.Error(t, err, "struct DL%s, whose Go name is %s, is accepted", name, name) {
			continue
		}
		assert.Contains(t, lines(err), line, "struct DL%s is not named at its line %d: %v", name, line, err)
		assert.NotContains(t, lines(err), 0, "struct DL%s: %v", name, err)
	}
}

// TestCollisionsWithNamesDlgenWritesHaveTheirPosition: the refusals the
// audit found at :0:0: or at the rules section.
func TestCollisionsWithNamesDlgenWritesHaveTheirPosition(t *testing.T) {
	for _, c := range []struct{ decl, want string }{
		{"  - struct: DLNullable\n    since: \"1.0\"\n    doc: X.\n    fields:\n      - {name: a, type: int32_t, since: \"1.0\", doc: \"A.\"}\n",
			"Go name Nullable would stand for both DLNullable and rules Nullable, which dlgen writes"},
		{"  - struct: DLNullWhen\n    since: \"1.0\"\n    doc: X.\n    fields:\n      - {name: a, type: int32_t, since: \"1.0\", doc: \"A.\"}\n",
			"Go name NullWhen would stand for both DLNullWhen and rules NullWhen, which dlgen writes"},
		{"  - struct: DLRule\n    since: \"1.0\"\n    doc: X.\n    fields:\n      - {name: a, type: int32_t, since: \"1.0\", doc: \"A.\"}\n",
			"Go name Rule would stand for both DLRule and rules Rule, which dlgen writes"},
	} {
		src, line := withDecl(t, c.decl)
		err := refusal(src)
		require.Error(t, err, c.decl)
		assert.Equal(t, fmt.Sprintf("names.yaml:%d:5: %s", line, c.want), err.Error())
	}
	// A macro, declared before every struct.
	src := strings.Replace(string(schema.DefaultBytes()), "macros:\n", "macros:\n  - name: DLPACK_MAX_DIMS\n    since: \"1.0\"\n    doc: Takes MaxDims.\n    values: [{since: \"1.0\", value: 8}]\n", 1)
	line := strings.Count(src[:strings.Index(src, "DLPACK_MAX_DIMS")], "\n") + 1
	err := refusal([]byte(src))
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("names.yaml:%d:5: Go name MaxDims would stand for both DLPACK_MAX_DIMS and rules.max_ndim, which dlgen writes", line), err.Error())
}
