package python

// The names that cross between the generated declarations and the
// hand-written sources in internal/backend/python/runtime: one table, in two parts, one each way.
// handover_test.go checks it against the sources and every release's
// output: each name is used (or defined) where it says, and no other name
// crosses. Besides these, the Cython sources take the header's structs and
// function types by their C names (view.Cimports) and its other
// declarations as dlpack.X, and a source may use what the other sources of
// the same file define (the modules' own parts use rules.py's checks and
// shared.py's protocol, which call their Tensor, from_dlpack and
// _private_copy).

// handover is a name, the files whose sources use it (declarations) or
// define it (public names), and what it is.
type handover struct {
	Name string
	In   hosts
	Doc  string
}

// hosts are where a name crosses: the modules, each with what it includes,
// and the stubs.
type hosts uint8

const (
	ctypesModule hosts = 1 << iota // dlpack_ctypes.py
	cythonModule                   // dlpack_cython.pyx and its .pxi files
	cythonStub                     // dlpack_cython.pyi
	ctypesStub                     // dlpack_ctypes.pyi
	modules      = ctypesModule | cythonModule
)

// declarations are what the generated declarations hand to the sources.
// The per-release tables the sources read are among them (the "tables"
// block of dlpack_declarations.py.tmpl): the release and its flags by
// role, and the import rules of docs/rules.md, which rules.py reads.
var declarations = []handover{
	{"DLDeviceType", modules, "the IntEnum of device types"},
	{"DLDataTypeCode", modules, "the IntEnum of type codes"},
	{"CAPSULE_NAME", modules, "the legacy capsule's name"},
	{"USED_CAPSULE_NAME", modules, "what a consumer renames it to"},
	{"VERSIONED_CAPSULE_NAME", modules, "the versioned capsule's name"},
	{"USED_VERSIONED_CAPSULE_NAME", modules, "what a consumer renames it to"},
	{"_VERSION", modules, "table: the release, (major, minor), by role"},
	{"_READ_ONLY", modules, "table: the read-only flag bit, by role"},
	{"_IS_COPIED", modules, "table: the is-copied flag bit, by role"},
	{"_SUBBYTE_PADDED", modules, "table: the flag bit of padded sub-byte elements, by role; 0 where they are always packed"},
	{"_MAX_NDIM", modules, "table: the most dimensions a tensor may have"},
	{"_NULLABLE", modules, "table: when each pointer field may be NULL, by tensor version"},
	{"_TYPE_CODES", modules, "table: each type code's enumerator, opacity and fixed width"},
	{"_HOST_READABLE", modules, "table: the device types whose memory the CPU reads"},
	{"_STREAMLESS", modules, "table: the device types without streams, where __dlpack__ takes only stream=None"},
	{"_DTYPES", modules, "table: the dtype names, each with its code and bits"},
	{"_RULES", modules, "table: each check's exception, words and parameters"},
	{"DLDataType", ctypesModule, "the ctypes Structure of a dtype, which a Tensor keeps as one word"},
	{"DLManagedTensor", ctypesModule, "the ctypes Structure of a legacy managed tensor"},
	{"DLManagedTensorVersioned", ctypesModule, "the ctypes Structure of a versioned managed tensor"},
	{"_POINTER_SIZE", ctypesModule, "table: this machine's pointer size, in bytes"},
	{"_LAYOUT", ctypesModule, "table: (struct, field or None, offset or size) of this machine's C data model"},
	{"_LEAVES", ctypesModule, "table: each struct's scalar fields in C order, with their struct-module codes"},
	{"dlpack", cythonModule, "dlpack.pxd, cimported: the header's declarations as dlpack.X"},
	{"_NAME", cythonModule, "the capsule names as static C strings, which capsules keep pointers to"},
	{"_USED_NAME", cythonModule, "(see _NAME)"},
	{"_VNAME", cythonModule, "(see _NAME)"},
	{"_USED_VNAME", cythonModule, "(see _NAME)"},
	{"_EXCHANGE_API_ATTRIBUTE", cythonModule, "from DLPack 1.2: the type attribute of the C exchange API"},
	{"_PREVIOUS_EXCHANGE_API_ATTRIBUTE", cythonModule, "its spelling in the release before, or None"},
	{"_EXCHANGE_API_CAPSULE_NAME", cythonModule, "the capsule name of its table, a C string; NULL where the table is an integer address"},
	{"_GENERATED_NAME", modules, "the module's full name: dlpack_cython or dlpack_ctypes, or inside the -python-package"},
	{"_BUILT_FINGERPRINT", cythonModule, "the fingerprint of the sources the module was built from, compiled in"},
	{"_ReleaseAttributes", cythonStub, "a stub-only base of Tensor with its attributes whose names vary by release"},
}

// publicNames are what the sources define for users: the generated
// __all__ of each module and its stub lists them with the declarations'
// public names, and the stub sources declare them.
var publicNames = []handover{
	{"DTYPE_NAMES", modules, "every dtype name of the release"},
	{"DataType", modules, "an element type: code, bits, lanes"},
	{"Device", modules, "a device: type and index"},
	{"Tensor", modules, "a tensor, imported or over memory someone owns"},
	{"from_buffer", modules, "a Tensor over a buffer-protocol object"},
	{"from_dlpack", modules, "imports a DLPack object or capsule"},
	{"from_managed", modules, "adopts a managed tensor C code handed over"},
	{"from_pointer", modules, "a Tensor over memory a framework owns"},
	{"to_managed", modules, "consumes a DLPack object for C code"},
	{"to_type", cythonModule, "hands a tensor to a type through its C exchange API"},
}

// public lists the names the sources define for users of a module
// (versioned releases: the others have no hand-written API).
func (m *view) public(cython bool) []string {
	if !m.Versioned {
		return nil
	}
	in := ctypesModule
	if cython {
		in = cythonModule
	}
	var names []string
	for _, h := range publicNames {
		if h.In&in != 0 {
			names = append(names, h.Name)
		}
	}
	return names
}

// ProtocolNames are the names the ctypes module of a versioned release
// defines for users; the module of a release before 1.0, which has none of
// them, says why when asked for one.
func (m *view) ProtocolNames() []string {
	var names []string
	for _, h := range publicNames {
		if h.In&ctypesModule != 0 {
			names = append(names, h.Name)
		}
	}
	return names
}
