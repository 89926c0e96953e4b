package rust

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend/rust"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// TestFmtKeepsTheLayoutOfLongNames: dlgen computes no line width, so the
// crate must be what rustfmt keeps whatever the width of the schema's
// names. The newest release with every name whose layout rustfmt would
// follow (function-pointer parameters, the enumerators of the rules'
// matches!, a message's parameters) made far longer, and made short.
func TestFmtKeepsTheLayoutOfLongNames(t *testing.T) {
	rustfmt := filepath.Join(filepath.Dir(Cargo(t)), "rustfmt")
	if !fileExists(rustfmt) {
		rustfmt = tooltest.Require(t, "rustfmt")
	}
	for _, name := range []struct {
		label string
		of    func(string) string
	}{
		{"long", func(n string) string { return n + strings.Repeat("_and_so_on", 10) }},
		{"short", func(n string) string { return n[:1] }},
	} {
		t.Run(name.label, func(t *testing.T) {
			s, releases := Releases(t)
			api := s.At(releases[len(releases)-1])
			for _, d := range api.Decls {
				if f, ok := d.(*ir.FuncType); ok {
					for _, p := range f.Sig.Params {
						p.Name = name.of(p.Name)
					}
				}
			}
			for _, ev := range api.Enum.DeviceType.Values {
				if ev.HostReadable {
					ev.Name = name.of(ev.Name) + ev.Name // distinct when short
				}
			}
			for _, ev := range api.Enum.DataTypeCode.Values {
				if ev.Opaque {
					ev.Name = name.of(ev.Name) + ev.Name
				}
			}
			messages := append([]*ir.Message(nil), api.Rules.Messages...)
			for i, m := range messages {
				copied := *m
				copied.Check.Params = nil
				for _, p := range m.Check.Params {
					copied.Check.Params = append(copied.Check.Params, name.of(p))
				}
				messages[i] = &copied
			}
			api.Rules.Messages = messages
			files, err := rust.Backend{}.Generate(api)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if _, err := generate.Write(dir, files); err != nil {
				t.Fatal(err)
			}
			tooltest.Run(t, filepath.Join(dir, rust.Dir), nil, rustfmt, "--edition", "2021", "--check", filepath.Join("src", "lib.rs"))
		})
	}
}
