package rust

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/abi"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rustProbes gives, for the probes of tests/abi that have a Rust
// counterpart, the Rust expression of the same fact (as a u64): every
// struct's size, alignment, field offsets, field sizes and field
// signedness, the size of each enum stored as a C int and of each function
// pointer, and the value of every enumerator, macro and flag. The rest have
// none: preprocessor facts, C++'s view of enums, and the size of an enum
// whose values a narrower integer stores (DLDataTypeCode is u8, as
// DLDataType.code holds it).
func rustProbes(api *ir.API) map[string]string {
	m := map[string]string{}
	for _, mac := range api.Macros {
		if mac.Kind == ir.MacroInteger {
			m["value of "+mac.Name] = mac.Name + " as u64"
		}
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *ir.Struct:
			m["size of "+d.Name] = fmt.Sprintf("size_of::<%s>() as u64", d.Name)
			m["alignment of "+d.Name] = fmt.Sprintf("align_of::<%s>() as u64", d.Name)
			for _, f := range d.Fields {
				name := f.Name
				m["offset of "+d.Name+"."+f.Name] = fmt.Sprintf("offset_of!(%s, %s) as u64", d.Name, name)
				m["size of "+d.Name+"."+f.Name] = fmt.Sprintf("field_size(|s: &%s| &s.%s)", d.Name, name)
				if f.Type.Kind == ir.Scalar {
					m["signedness of "+d.Name+"."+f.Name] = fmt.Sprintf("signedness(|s: &%s| &s.%s)", d.Name, name)
				}
			}
		case *ir.Enum:
			if ir.Scalars[d.Storage].Size == 4 {
				m["size of "+d.Name] = fmt.Sprintf("size_of::<%s>() as u64", d.Name)
			}
			for _, e := range d.Values {
				m["value of "+e.Name] = fmt.Sprintf("%s::%s.0 as i64 as u64", d.Name, e.Name)
			}
		case *ir.Flags:
			for _, b := range d.Bits {
				m["value of "+b.Name] = b.Name
			}
		case *ir.FuncType:
			m["size of "+d.Name] = fmt.Sprintf("size_of::<%s>() as u64", d.Name)
		}
	}
	return m
}

const probeHelpers = `use core::mem::{align_of, offset_of, size_of};
use dlpack::*;

fn field_size<S, F>(_: impl Fn(&S) -> &F) -> u64 {
    size_of::<F>() as u64
}

trait Signed {
    const SIGNED: bool;
}

macro_rules! signed {
    ($($t:ty),*) => {$(impl Signed for $t { const SIGNED: bool = <$t>::MIN != 0; })*};
}

signed!(i8, i16, i32, i64, u8, u16, u32, u64);

fn signedness<S, F: Signed>(_: impl Fn(&S) -> &F) -> u64 {
    F::SIGNED as u64
}
`

// hosts are the targets whose probes run here: the machine's own, and
// i686 (the other data model a C compiler here builds for), each with the
// gcc that measures the C side.
var hosts = []struct {
	gcc    string // the name of a target of abi.Targets
	triple string // the Rust target; "" for the host
	env    []string
}{
	{gcc: "x86_64"},
	{gcc: "i686", triple: "i686-unknown-linux-gnu", env: []string{"CARGO_TARGET_I686_UNKNOWN_LINUX_GNU_LINKER=i686-linux-gnu-gcc"}},
}

// TestLayoutMatchesCOnTheHost compares, for every release, each fact the C
// compiler gives for the generated header (the probes of tests/abi) with
// what rustc gives for the generated crate on the same machine, for x86_64
// and i686.
func TestLayoutMatchesCOnTheHost(t *testing.T) {
	s, releases := Releases(t)
	for _, v := range releases {
		t.Run("v"+v.String(), func(t *testing.T) {
			api := s.At(v)
			exprs := rustProbes(api)
			var names []string
			var b strings.Builder
			b.WriteString(probeHelpers + "\nfn main() {\n")
			for _, p := range abi.Probes(api) {
				if e, ok := exprs[p.Name]; ok {
					names = append(names, p.Name)
					fmt.Fprintf(&b, "    println!(\"{}\", %s);\n", e)
				}
			}
			b.WriteString("}\n")
			dir := Probe(t, Crate(t, s, v), "layout", []byte(b.String()))
			header := generatedHeader(t, s, v)
			for _, h := range hosts {
				cValues := abi.Measure(t, gccTarget(t, h.gcc), api, header)
				byName := map[string]uint64{}
				for i, p := range abi.Probes(api) {
					byName[p.Name] = cValues[i]
				}
				args := []string{"run", "--quiet", "--bin", "layout"}
				if h.triple != "" {
					args = append(args, "--target", h.triple)
				}
				out := tooltest.Run(t, dir, append(Env(), h.env...), Cargo(t), args...)
				lines := strings.Fields(out)
				require.Len(t, lines, len(names), "one value per probe")
				for i, name := range names {
					got, err := strconv.ParseUint(lines[i], 10, 64)
					require.NoError(t, err)
					assert.Equal(t, byName[name], got, "%s on %s: C (gcc) vs Rust", name, h.gcc)
				}
				fmt.Printf("v%s: %d facts of the Rust crate equal gcc's on %s\n", v, len(names), h.gcc)
			}
		})
	}
}

func gccTarget(t *testing.T, name string) abi.Target {
	for _, target := range abi.Targets {
		if target.Name == name {
			return target
		}
	}
	t.Fatalf("no gcc target %s in tests/abi", name)
	return abi.Target{}
}

// generatedHeader writes the C header of release v and returns the
// include directory that holds dlpack/dlpack.h.
func generatedHeader(t *testing.T, s *ir.Schema, v ir.Version) string {
	t.Helper()
	files, err := generate.Files(generate.Options{Schema: s, SchemaName: schema.DefaultFile, Version: v, Langs: []string{"c"}})
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = generate.Write(dir, files)
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "c", "dlpack", "dlpack.h"))
	return filepath.Join(dir, "c")
}
