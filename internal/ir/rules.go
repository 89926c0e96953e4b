package ir

import "strings"

// The rules a consumer checks before it touches a foreign tensor are data:
// facts carried by the declarations they are about (which pointer fields
// may be NULL and from which release, which type codes allow one width or
// cannot be addressed, which device types the CPU reads directly, the
// names of element types), plus Rules: dlgen's own limit on dimensions and
// the message of every check. Backends emit them as tables that each
// language's hand-written checker reads; docs/rules.md is the manual.

// NullWhen says when a pointer field may be NULL.
type NullWhen int

const (
	NullNever        NullWhen = iota // never (a pointer field without nullable)
	NullAlways                       // always
	NullIfNdimZero                   // only when the tensor has no dimensions
	NullIfNoElements                 // only when the tensor has no elements
)

var nullWhenNames = []string{"never", "always", "ndim_zero", "no_elements"}

// String is the condition's spelling in the schema.
func (w NullWhen) String() string { return nullWhenNames[w] }

// NullWhens lists every condition.
func NullWhens() []NullWhen {
	return []NullWhen{NullNever, NullAlways, NullIfNdimZero, NullIfNoElements}
}

// Nullable says when a pointer field may be NULL. Rules of this kind hold
// for the tensor's own version, not the consumer's: a field that may be
// NULL in tensors older than Changed.In keeps that rule for them in every
// release.
type Nullable struct {
	When NullWhen // when the field may be NULL in tensors of this release
	// Changed, when set, says that in tensors older than release In the
	// field could be NULL under From (strides: always before 1.2).
	Changed *NullableChange
}

// NullableChange is a nullable rule of older tensors.
type NullableChange struct {
	In   Version  // the release whose tensors follow the new rule
	From NullWhen // the rule of tensors older than In
}

// DataTypeName names one element type, of one lane: the name code and bits
// are known by in every language (float32, bfloat16, float8_e4m3fn, bool).
type DataTypeName struct {
	Name string // such as float32
	Bits int    // the width the name stands for
	Pos  Pos    // where the schema declares it
}

// NamedDataType is a DataTypeName with its code, as API.DataTypeNames
// lists them.
type NamedDataType struct {
	Name string // such as float32
	Code int64  // its DLDataTypeCode value
	Bits int    // its width
}

// Rules is what the checks need beyond the declarations' facts.
type Rules struct {
	// MaxDims is the most dimensions a tensor may have (dlgen's limit;
	// DLPack sets none).
	MaxDims int
	// Messages holds one message per Check, in the order of Checks; nil in
	// a schema without rules.
	Messages []*Message
}

// Message is the error of one check: the same words in every language.
type Message struct {
	Check  Check  // the check the message is the error of
	Python string // the exception a Python module raises: BufferError, ValueError or TypeError
	Text   string // the words, with {param} placeholders for the check's Params
	Pos    Pos    // where the schema declares it
}

// Check is one thing a consumer or a producer API checks, with the
// parameters its message may name. The hand-written checkers of every
// language make the import checks in the order of Checks and pass the
// parameters in the order of Params.
type Check struct {
	ID      string   // the rule's name in messages and the corpus, such as negative_extent
	Purpose string   // what the check is for, in one sentence
	Params  []string // the names its message may use, in the order checkers pass them
}

// Checks is the vocabulary of checks the hand-written checkers implement:
// the import checks, in the order a consumer makes them, then the checks of
// producer and reading APIs. A schema with rules gives each one message.
var Checks = []Check{
	{"version_major", "a versioned tensor has the consumer's major version (then nothing else is read)",
		[]string{"major", "minor", "this_major", "this_minor"}},
	{"ndim_range", "ndim lies in [0, max_ndim]", []string{"ndim", "max_ndim"}},
	{"shape_null", "shape is not NULL unless its nullable rule allows it", []string{"ndim"}},
	{"strides_null", "strides is not NULL unless its nullable rule, for the tensor's version, allows it",
		[]string{"ndim", "major", "minor", "from_major", "from_minor"}},
	{"strides_count", "a producer API is given one stride per dimension", []string{"count", "ndim"}},
	{"dtype_unknown", "the type code is an enumerator of the release", []string{"code"}},
	{"dtype_opaque", "the type code's elements can be addressed", []string{"code", "name"}},
	{"dtype_zero", "bits and lanes are not 0", []string{"bits", "lanes"}},
	{"dtype_bits", "a type code that allows one width has it", []string{"code", "name", "bits", "required"}},
	{"shape_negative", "no extent is negative (the first one is named)", []string{"extent", "dim"}},
	{"byte_offset_limit", "byte_offset is below 2^(P-1)", []string{"byte_offset", "log2"}},
	{"size_limit", "the element count, every 0 extent read as 1, and its bytes are below 2^(P-1)", []string{"log2"}},
	{"stride_limit", "every stride, in elements and in bytes, is below 2^(P-1) (the first one past is named)",
		[]string{"stride", "dim", "log2"}},
	{"span_limit", "the elements' span, in elements and in bytes, is below 2^(P-1)", []string{"log2"}},
	{"offset_limit", "the end of the last element lies less than 2^(P-1) bytes from data", []string{"byte_offset", "log2"}},
	{"data_null", "data is not NULL unless its nullable rule allows it", []string{"count"}},
	{"address_limit", "every byte of every element, and the end of the last, has an address in [0, 2^P)", []string{"data", "byte_offset"}},
	{"device_unreadable", "reading memory on the CPU needs a host-readable device type", []string{"device_type", "device_id"}},
	{"dtype_name", "a dtype name is one of the release's", []string{"name", "known"}},
	{"stream_refused", "a stream other than None goes only to a device type with streams",
		[]string{"device_type", "device_id"}},
}

// CheckByID returns the check called id.
func CheckByID(id string) (Check, bool) {
	for _, c := range Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// MessagePart is a piece of a message: literal text, or the parameter
// Param (its index in the check's Params) where Text is "".
type MessagePart struct {
	Text  string // literal text, or "" for a parameter
	Param int    // the parameter's index in the check's Params
}

// Parts splits the message into literal text and parameters, for backends
// that render it in their language's format syntax. A loaded schema
// guarantees that every {name} is a parameter of the check and that no
// other brace appears.
func (m *Message) Parts() []MessagePart {
	var parts []MessagePart
	rest := m.Text
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			parts = append(parts, MessagePart{Text: rest})
			break
		}
		if open > 0 {
			parts = append(parts, MessagePart{Text: rest[:open]})
		}
		end := strings.IndexByte(rest, '}')
		name := rest[open+1 : end]
		for i, p := range m.Check.Params {
			if p == name {
				parts = append(parts, MessagePart{Param: i})
			}
		}
		rest = rest[end+1:]
	}
	return parts
}
