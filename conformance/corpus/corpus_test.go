package corpus

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCorpusLoads(t *testing.T) {
	c, err := Load()
	require.NoError(t, err)
	require.NotEmpty(t, c.Cases)
	var accepted, legacy int
	for _, cc := range c.Cases {
		if cc.Accept {
			accepted++
		}
		if cc.Tensor.Version == nil {
			legacy++
		}
	}
	assert.Positive(t, accepted)
	assert.Less(t, accepted, len(c.Cases))
	assert.Positive(t, legacy)
}

func TestMalformedTensorsAreRefused(t *testing.T) {
	defaults := map[string][]byte{"data": []byte(`"buffer"`), "buffer_bytes": []byte("8"), "ndim": []byte("1"),
		"shape": []byte("[2]"), "strides": []byte("[1]"), "version": []byte("[1, 3]"), "dtype": []byte("[2, 32, 1]")}
	for want, keys := range map[string]map[string][]byte{
		`unknown field "stride"`:                      {"stride": []byte("[1]")},
		"dtype [2 256 1] does not fit DLDataType":     {"dtype": []byte("[2, 256, 1]")},
		"a legacy tensor has no flags":                {"version": []byte("null"), "flags": []byte("1")},
		"shape and strides list ndim (1) entries":     {"shape": []byte("[2, 2]")},
		"addresses below 4096 are reserved":           {"data": []byte("100")},
		"a buffer of 0 bytes":                         {"buffer_bytes": []byte("0")},
		`data is "buffer", null or an address: json:`: {"data": []byte(`"heap"`)},
	} {
		d, k := raw(defaults), raw(keys)
		_, err := merge(d, k)
		assert.ErrorContains(t, err, want)
	}
	_, err := merge(raw(defaults), nil)
	assert.NoError(t, err)
}

func raw(m map[string][]byte) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
