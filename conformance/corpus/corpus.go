// Package corpus reads the conformance corpus, corpus.json: managed
// tensors, well formed and malformed, with the verdict, rule and message
// every DLPack consumer dlgen writes must give (docs/corpus.md). The
// runners of every language that are written in Go (dltensor's, the Rust
// crate's) load it here; each case comes with its defaults applied and
// checked against the format.
package corpus

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

//go:embed corpus.json
var corpusJSON []byte

// Format is the format line a corpus must have.
const Format = "dlgen-conformance 1"

// Corpus is the file: the release its expectations are for and its cases.
type Corpus struct {
	About    string    // what the file is, for its readers
	Consumer [2]uint32 // [major, minor]: the release the expectations are for
	Cases    []Case    // the tensors, each with its verdict
}

// Case is one tensor with the verdict a consumer must reach on it.
type Case struct {
	Name        string // a unique name, such as negative_extent
	Why         string // what the case is about, for its readers
	PointerBits int    // 64 or 32; 0: any
	Tensor      Tensor // the managed tensor to import
	Accept      bool   // whether a consumer must accept it
	Rule        string // for a refusal: the id of the check that fails first
	Message     string // for a refusal: the error's words
}

// For reports whether the case is for pointers of the given width.
func (c Case) For(pointerBits int) bool { return c.PointerBits == 0 || c.PointerBits == pointerBits }

// Tensor is a managed tensor as a producer hands it over.
type Tensor struct {
	Version        *[2]uint32 // nil: a legacy DLManagedTensor, without flags
	Flags          uint64     // DLPACK_FLAG_BITMASK_* bits
	Device         [2]int32   // device_type, device_id
	Code, Bits     uint8      // the dtype's code and bits
	Lanes          uint16     // the dtype's lanes
	NDim           int32      // ndim, as the producer says it
	Shape, Strides []int64    // nil: NULL
	ByteOffset     uint64     // byte_offset
	// Data says where data points: a fresh zeroed buffer of BufferBytes
	// bytes, NULL, or Address, which is never read.
	Data        DataKind
	BufferBytes int    // the size of the buffer, for DataBuffer
	Address     uint64 // the address, for DataAddress
}

// Line is t on one line, as the importers of other languages read it
// (tests/rust/importer.rs, tests/chelpers/testdata/importer.c): version
// (major.minor, or legacy), flags, device type and id, code, bits, lanes,
// ndim, shape and strides (lists, or null), byte_offset, data (buffer:N,
// null or address:A).
func (t Tensor) Line() string {
	list := func(xs []int64) string {
		if xs == nil {
			return "null"
		}
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = strconv.FormatInt(x, 10)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	version := "legacy"
	if t.Version != nil {
		version = fmt.Sprintf("%d.%d", t.Version[0], t.Version[1])
	}
	data := "null"
	switch t.Data {
	case Buffer:
		data = fmt.Sprintf("buffer:%d", t.BufferBytes)
	case Address:
		data = fmt.Sprintf("address:%d", t.Address)
	}
	return fmt.Sprintf("%s %d %d %d %d %d %d %d %s %s %d %s", version, t.Flags, t.Device[0], t.Device[1],
		t.Code, t.Bits, t.Lanes, t.NDim, list(t.Shape), list(t.Strides), t.ByteOffset, data)
}

// DataKind is what a tensor's data points to.
type DataKind int

const (
	Buffer  DataKind = iota // a fresh zeroed buffer of BufferBytes bytes
	Null                    // NULL
	Address                 // Address, never read
)

// file is corpus.json as it is written.
type file struct {
	Format   string                     `json:"format"`
	About    string                     `json:"about"`
	Consumer [2]uint32                  `json:"consumer"`
	Defaults map[string]json.RawMessage `json:"defaults"`
	Cases    []struct {
		Name        string                     `json:"name"`
		Why         string                     `json:"why"`
		PointerBits int                        `json:"pointer_bits"`
		Tensor      map[string]json.RawMessage `json:"tensor"`
		Verdict     string                     `json:"verdict"`
		Rule        string                     `json:"rule"`
		Message     string                     `json:"message"`
	} `json:"cases"`
}

// tensor is a tensor as it is written, its defaults applied.
type tensor struct {
	Version     *[2]uint32      `json:"version"`
	Flags       uint64          `json:"flags"`
	Device      [2]int32        `json:"device"`
	DType       [3]uint64       `json:"dtype"`
	NDim        int32           `json:"ndim"`
	Shape       []int64         `json:"shape"`
	Strides     []int64         `json:"strides"`
	ByteOffset  uint64          `json:"byte_offset"`
	Data        json.RawMessage `json:"data"`
	BufferBytes int             `json:"buffer_bytes"`
}

// Load reads the corpus and checks it against the format: an error names
// what is wrong and where.
func Load() (*Corpus, error) {
	var f file
	if err := strictDecode(corpusJSON, &f); err != nil {
		return nil, fmt.Errorf("corpus.json: %w", err)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("corpus.json: format %q, not %q", f.Format, Format)
	}
	c := &Corpus{About: f.About, Consumer: f.Consumer}
	names := map[string]bool{}
	for _, fc := range f.Cases {
		if names[fc.Name] {
			return nil, fmt.Errorf("corpus.json: two cases are called %q", fc.Name)
		}
		names[fc.Name] = true
		cc := Case{Name: fc.Name, Why: fc.Why, PointerBits: fc.PointerBits, Rule: fc.Rule, Message: fc.Message}
		switch {
		case fc.PointerBits != 0 && fc.PointerBits != 32 && fc.PointerBits != 64:
			return nil, fmt.Errorf("corpus.json: case %q: pointer_bits %d", fc.Name, fc.PointerBits)
		case fc.Verdict == "accept" && fc.Rule == "" && fc.Message == "":
			cc.Accept = true
		case fc.Verdict == "refuse" && fc.Rule != "" && fc.Message != "":
		default:
			return nil, fmt.Errorf("corpus.json: case %q: verdict %q with rule %q and message %q", fc.Name, fc.Verdict, fc.Rule, fc.Message)
		}
		t, err := merge(f.Defaults, fc.Tensor)
		if err != nil {
			return nil, fmt.Errorf("corpus.json: case %q: %w", fc.Name, err)
		}
		cc.Tensor = t
		c.Cases = append(c.Cases, cc)
	}
	return c, nil
}

// merge puts the keys of a case's tensor over the defaults.
func merge(defaults, keys map[string]json.RawMessage) (Tensor, error) {
	merged := map[string]json.RawMessage{}
	for k, v := range defaults {
		merged[k] = v
	}
	for k, v := range keys {
		merged[k] = v
	}
	raw, err := json.Marshal(merged)
	if err != nil {
		return Tensor{}, err
	}
	var w tensor
	if err := strictDecode(raw, &w); err != nil {
		return Tensor{}, err
	}
	switch {
	case w.DType[0] > 255 || w.DType[1] > 255 || w.DType[2] > 1<<16-1:
		return Tensor{}, fmt.Errorf("dtype %v does not fit DLDataType", w.DType)
	case w.Version == nil && w.Flags != 0:
		return Tensor{}, fmt.Errorf("a legacy tensor has no flags")
	case len(w.Shape) > 64 || len(w.Strides) > 64:
		return Tensor{}, fmt.Errorf("shape and strides list at most 64 entries")
	case w.NDim >= 0 && w.NDim <= 64 && (w.Shape != nil && len(w.Shape) != int(w.NDim) || w.Strides != nil && len(w.Strides) != int(w.NDim)):
		return Tensor{}, fmt.Errorf("shape and strides list ndim (%d) entries", w.NDim)
	}
	t := Tensor{
		Version: w.Version, Flags: w.Flags, Device: w.Device,
		Code: uint8(w.DType[0]), Bits: uint8(w.DType[1]), Lanes: uint16(w.DType[2]),
		NDim: w.NDim, Shape: w.Shape, Strides: w.Strides, ByteOffset: w.ByteOffset,
	}
	switch string(w.Data) {
	case `"buffer"`:
		if w.BufferBytes <= 0 {
			return Tensor{}, fmt.Errorf("a buffer of %d bytes", w.BufferBytes)
		}
		t.Data, t.BufferBytes = Buffer, w.BufferBytes
	case "null":
		t.Data = Null
	default:
		if err := json.Unmarshal(w.Data, &t.Address); err != nil {
			return Tensor{}, fmt.Errorf(`data is "buffer", null or an address: %w`, err)
		}
		if t.Address < 4096 {
			return Tensor{}, fmt.Errorf("addresses below 4096 are reserved")
		}
		t.Data = Address
	}
	return t, nil
}

// strictDecode decodes JSON into v, refusing unknown keys and anything
// after the value.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// Raw is Load's corpus and the file's bytes, for a generator that ships the
// corpus as it is written (dlgen -lang conformance).
func Raw() (*Corpus, []byte, error) {
	c, err := Load()
	return c, corpusJSON, err
}
