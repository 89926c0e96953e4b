package backend

import (
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type named string

func (n named) Name() string                   { return string(n) }
func (named) Generate(*ir.API) ([]File, error) { return nil, nil }

// withRegistry runs f against an empty registry and puts the real one back.
func withRegistry(t *testing.T, f func()) {
	saved := registry
	registry = map[string]Registration{}
	t.Cleanup(func() { registry = saved })
	f()
}

func TestRegisteredIsByNameAndMakesWithTheConfig(t *testing.T) {
	withRegistry(t, func() {
		for _, n := range []string{"rust", "c", "python"} {
			Register(Registration{Name: n, New: func(c Config) Backend { return named(n + ":" + c.Schema + ":" + c.Options["x"]) }})
		}
		var names []string
		for _, r := range Registered() {
			names = append(names, r.Name)
		}
		assert.Equal(t, []string{"c", "python", "rust"}, names)
		r, ok := Lookup("python")
		require.True(t, ok)
		assert.Equal(t, "python:s.yaml:v", r.New(Config{Schema: "s.yaml", Options: map[string]string{"x": "v"}}).Name())
		_, ok = Lookup("cobol")
		assert.False(t, ok)
	})
}

func TestRegisterRefusesTwoOfANameAndAFlagTakenTwice(t *testing.T) {
	withRegistry(t, func() {
		newC := func(Config) Backend { return named("c") }
		Register(Registration{Name: "c", Options: []Option{{Flag: "c-std"}}, New: newC})
		assert.PanicsWithValue(t, `backend.Register: backend "c" registered twice, or without a name or New`,
			func() { Register(Registration{Name: "c", New: newC}) })
		assert.PanicsWithValue(t, `backend.Register: -c-std of backend "cpp" is already backend "c"'s`,
			func() { Register(Registration{Name: "cpp", Options: []Option{{Flag: "c-std"}}, New: newC}) })
		assert.PanicsWithValue(t, `backend.Register: backend "" registered twice, or without a name or New`,
			func() { Register(Registration{New: newC}) })
	})
}
