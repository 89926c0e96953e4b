package rust

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A field of an enum stored in fewer bytes than C's int would change the
// layout: the backend refuses it, as the Go backend does.
func TestNarrowEnumFieldIsRefused(t *testing.T) {
	code := &ir.Enum{Name: "DLDataTypeCode", Storage: "uint8_t"}
	_, err := rustType(&ir.Type{Kind: ir.Named, Name: code.Name, Decl: code})
	assert.ErrorContains(t, err, "enum DLDataTypeCode is stored as uint8_t")
}

func TestKeywordParametersAreRenamed(t *testing.T) {
	void := &ir.Type{Kind: ir.Scalar, Name: "void"}
	self := &ir.Type{Kind: ir.Pointer, Elem: &ir.Type{Kind: ir.Named, Name: "DLTensor"}}
	f, err := funcType(&ir.Signature{Returns: void, Params: []*ir.Param{{Name: "self", Type: self}, {Name: "type", Type: self}}})
	require.NoError(t, err)
	assert.Equal(t, `Option<unsafe extern "C" fn(
    self_: *mut DLTensor,
    type_: *mut DLTensor,
)>`, f.text(""))
}

// A function pointer has one layout whatever the width of its names: its
// parameters one a line, a nested one's one level deeper.
func TestFunctionPointerLayoutIgnoresWidth(t *testing.T) {
	ptr := func(name string) *ir.Type {
		return &ir.Type{Kind: ir.Pointer, Elem: &ir.Type{Kind: ir.Named, Name: name}}
	}
	void := &ir.Type{Kind: ir.Scalar, Name: "void"}
	callback := &ir.Type{Kind: ir.Func, Sig: &ir.Signature{Returns: void, Params: []*ir.Param{{Name: "t", Type: ptr("T")}}}}
	short, err := funcType(&ir.Signature{Returns: &ir.Type{Kind: ir.Scalar, Name: "int"}, Params: []*ir.Param{{Name: "cb", Type: callback}}})
	require.NoError(t, err)
	assert.Equal(t, `Option<unsafe extern "C" fn(
        cb: Option<unsafe extern "C" fn(
            t: *mut T,
        )>,
    ) -> c_int>`, short.text("    "))
	long := strings.Repeat("L", 120)
	wide, err := funcType(&ir.Signature{Returns: void, Params: []*ir.Param{{Name: "t", Type: ptr(long)}}})
	require.NoError(t, err)
	assert.Equal(t, "Option<unsafe extern \"C\" fn(\n    t: *mut "+long+",\n)>", wide.text(""))
	none, err := funcType(&ir.Signature{Returns: void})
	require.NoError(t, err)
	assert.Equal(t, `Option<unsafe extern "C" fn()>`, none.text(""))
}

// Every data model of the IR has a cfg predicate, and each release's crate
// guards each model once.
func TestEveryModelIsGuarded(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	for _, r := range s.Releases {
		files, err := Backend{}.Generate(s.At(r.Version))
		require.NoError(t, err)
		var layout string
		for _, f := range files {
			if f.Path == Dir+"/src/layout.rs" {
				layout = string(f.Content)
			}
		}
		for _, abi := range ir.ABIs {
			assert.Equal(t, 1, strings.Count(layout, `pub const C_DATA_MODEL: &str = "`+abi.Name+`";`), "v%s %s", r.Version, abi.Name)
		}
		assert.Equal(t, len(ir.ABIs), strings.Count(layout, "const _: () = {"), "v%s", r.Version)
		assert.Equal(t, 1, strings.Count(layout, "compile_error!"), "v%s", r.Version)
	}
}

// The safe layer and the PyO3 glue come with versioned tensors (1.0); the
// exchange module follows the release's exchange API.
func TestHandWrittenSourcesPerRelease(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	for _, r := range s.Releases {
		api := s.At(r.Version)
		files, err := Backend{}.Generate(api)
		require.NoError(t, err)
		byPath := map[string]string{}
		for _, f := range files {
			byPath[f.Path] = string(f.Content)
		}
		exchange, ok := byPath[Dir+"/src/python/exchange.rs"]
		if api.Versions.Major == nil {
			assert.False(t, ok, "v%s: no safe layer before 1.0", r.Version)
			assert.NotContains(t, byPath[Dir+"/Cargo.toml"], "[features]")
			continue
		}
		require.True(t, ok, "v%s", r.Version)
		hasAPI := api.Protocol.ExchangeAPIAttribute != nil
		assert.Equal(t, hasAPI, strings.Contains(exchange, "DLPackExchangeAPI"), "v%s", r.Version)
		assert.True(t, strings.HasPrefix(byPath[Dir+"/src/tensor.rs"], "// "+backend.Marker+"\n"))
	}
}

// A rule changes in one place, the schema: every fact the checker reads
// comes out of src/rules.rs as the IR states it, and the backend keeps no
// fact or spelling of its own.
func TestRulesAreTheIRs(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	api := s.At(s.Newest())
	api.Rules.MaxDims = 32
	messages := append([]*ir.Message(nil), api.Rules.Messages...)
	ndim := *messages[1]
	ndim.Text = `ndim {ndim} is not in [0, {max_ndim}] "quoted" \ {ndim}`
	messages[1] = &ndim
	api.Rules.Messages = messages
	for _, ev := range api.Enum.DeviceType.Values {
		if ev.Value == 2 {
			ev.Name, ev.HostReadable = "kDLGPU", true
		}
	}
	for _, ev := range api.Enum.DataTypeCode.Values {
		switch ev.Value {
		case 0:
			ev.Bits = 12
		case 6:
			ev.Opaque = true
		}
	}
	for _, st := range api.Structs() {
		for _, f := range st.Fields {
			if f.Nullable.When == ir.NullIfNoElements {
				f.Nullable = ir.Nullable{When: ir.NullAlways, Changed: &ir.NullableChange{In: ir.Version{Major: 1, Minor: 1}, From: ir.NullNever}}
			}
		}
	}
	files, err := Backend{}.Generate(api)
	require.NoError(t, err)
	var rules string
	for _, f := range files {
		if f.Path == Dir+"/src/rules.rs" {
			rules = string(f.Content)
		}
	}
	body := func(fn string) string {
		i := strings.Index(rules, "const fn "+fn+"(")
		require.Positive(t, i, fn)
		return rules[i : i+strings.Index(rules[i:], "\n    }\n")]
	}
	assert.Contains(t, rules, "pub const MAX_NDIM: usize = 32;")
	assert.Contains(t, rules, `text: "ndim {ndim} is not in [0, {max_ndim}] \"quoted\" \\ {ndim}",`)
	assert.Contains(t, body("is_host_readable"), "Self::kDLGPU")
	assert.Contains(t, body("fixed_bits"), "Self::kDLInt => Some(12),")
	assert.Contains(t, body("is_opaque"), "            Self::kDLOpaqueHandle\n                | Self::kDLBool\n")
	assert.Contains(t, rules, `    pub const DATA_NULLABLE: Nullable = Nullable {
        when: NullWhen::Always,
        changed: Some(NullableChange {
            since: (1, 1),
            before: NullWhen::Never,
        }),
    };`)
	assert.Contains(t, rules, "        code: DLDataTypeCode::kDLInt,\n        bits: 8,")
	assert.Contains(t, rules, `        params: &["ndim", "max_ndim"],`)
	for i, m := range api.Rules.Messages {
		assert.Contains(t, rules, "        id: "+rustString(m.Check.ID)+",", "message %d", i)
	}
	assert.Equal(t, len(ir.Checks), strings.Count(rules, "    Message {\n"))
}
