package schema

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edit returns the default schema with old replaced by new once.
func edit(t *testing.T, old, new string) []byte {
	t.Helper()
	src := string(DefaultBytes())
	require.Equal(t, 1, strings.Count(src, old), "the edit must match exactly once: %q", old)
	return []byte(strings.Replace(src, old, new, 1))
}

func TestRolesResolvePerRelease(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	for _, r := range s.Releases {
		api := s.At(r.Version)
		p, vm := api.Protocol, api.Versions
		require.NotNil(t, p.Capsule, "%s", r.Version)
		assert.Equal(t, "dltensor", p.Capsule.Name)
		assert.Equal(t, "used_dltensor", p.UsedCapsule.Name)
		versioned := !r.Version.Less(ir.Version{Major: 1})
		assert.Equal(t, versioned, vm.Major != nil, "%s", r.Version)
		assert.Equal(t, versioned, p.VersionedCapsule != nil, "%s", r.Version)
		if versioned {
			assert.Equal(t, int64(r.Version.Major), vm.Major.Value)
			assert.Equal(t, int64(r.Version.Minor), vm.Minor.Value)
			assert.Equal(t, "used_dltensor_versioned", p.UsedVersionedCapsule.Name)
			assert.Nil(t, vm.Version)
		} else {
			assert.Equal(t, int64(r.Version.Minor*10), vm.Version.Value)
		}
		switch r.Version.String() {
		case "1.2":
			assert.Equal(t, "__c_dlpack_exchange_api__", p.ExchangeAPIAttribute.Name, "renamed in 1.3")
			assert.Nil(t, p.ExchangeAPICapsule, "an integer address in 1.2")
		case "1.3", "main":
			assert.Equal(t, "__dlpack_c_exchange_api__", p.ExchangeAPIAttribute.Name)
			assert.Equal(t, "dlpack_exchange_api", p.ExchangeAPICapsule.Name)
		default:
			assert.Nil(t, p.ExchangeAPIAttribute, "%s", r.Version)
		}
	}
}

// Backends find macros and names by role, so renaming one is harmless.
func TestRenamedRoleHoldersStillResolve(t *testing.T) {
	src := edit(t, "  - name: DLPACK_MINOR_VERSION\n", "  - name: DLPACK_MINOR\n")
	s, err := Load("renamed.yaml", src)
	require.NoError(t, err)
	api := s.At(s.Newest())
	assert.Equal(t, "DLPACK_MINOR", api.Versions.Minor.Name)
	assert.Equal(t, int64(3), api.Versions.Minor.Value)
}

func TestRetypedFieldGetsAParsedOldType(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	for v, want := range map[string]string{"0.6": "int ndim", "0.7": "int32_t ndim"} {
		version, err := ir.ParseVersion(v)
		require.NoError(t, err)
		for _, st := range s.At(version).Structs() {
			for _, f := range st.Fields {
				if st.Name == "DLTensor" && f.Name == "ndim" {
					assert.Equal(t, want, f.Type.C(f.Name), v)
				}
			}
		}
	}
}

const ndimRetype = "- name: ndim\n        type: int32_t\n        since: \"0.6\"\n        retyped: {in: \"0.7\", from: int}"

func TestLoadRejectsBrokenRoles(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"retyped to an undefined type", ndimRetype, strings.Replace(ndimRetype, "from: int", "from: ynt", 1), "DLTensor.ndim before 0.7 uses undefined type ynt"},
		{"retyped to an unparsable type", ndimRetype, strings.Replace(ndimRetype, "from: int", `from: "int)"`, 1), "retyped.from of DLTensor.ndim: cannot parse C type"},
		{"unknown python role", "role: used_capsule\n", "role: spent_capsule\n", `python role must be one of capsule, used_capsule, versioned_capsule, used_versioned_capsule, exchange_api_attribute, exchange_api_capsule, not "spent_capsule"`},
		{"python name without role", "    role: used_capsule\n", "", `a python name is missing required key "role"`},
		{"missing python role", "    role: used_capsule\n", "    role: used_versioned_capsule\n", "release 0.6 has no python name with role used_capsule"},
		{"role played twice", "    role: used_capsule\n", "    role: capsule\n", "python role capsule is played by both dltensor"},
		{"versioned protocol without its capsule", "    role: versioned_capsule\n", "    role: exchange_api_capsule\n", "release 1.0 has a major_version macro (the versioned protocol) but no python name with role versioned_capsule"},
		{"macro role removed", "    role: minor_version\n", "", "release 1.0 needs both a major_version and a minor_version macro, or neither"},
		{"unknown macro role", "    role: minor_version\n", "    role: minor\n", "macro role must be one of major_version, minor_version, version, abi_version"},
		{"role on a non-value macro", "    kind: dll\n", "    kind: dll\n    role: version\n", "only value macros have roles"},
		{"minor version that is not the release's", `{since: "1.2", value: "2"}`, `{since: "1.2", value: "7"}`, "DLPACK_MINOR_VERSION is 7 in release 1.2; a minor_version macro must be the release's minor number, 2"},
		{"combined version that is not the release's", `{since: "0.7", value: "70"}`, `{since: "0.7", value: "-70"}`, "DLPACK_VERSION is -70 in release 0.7; a version macro must be major*100 + minor*10, 70"},
		{"exchange capsule without attribute", "    role: exchange_api_attribute\n", "    role: capsule\n", "has a python name with role exchange_api_capsule but none with role exchange_api_attribute"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("dlpack.yaml", edit(t, tc.old, tc.new))
			requirePositioned(t, err, "dlpack.yaml", tc.want)
		})
	}
}

func TestRoleProblemsAreReportedOnceNotPerRelease(t *testing.T) {
	_, err := Load("dlpack.yaml", edit(t, "    role: used_capsule\n", "    role: capsule\n"))
	require.ErrorContains(t, err, "python role capsule is played by both")
	assert.Equal(t, 1, strings.Count(err.Error(), "python role capsule is played by both"), err.Error())
	_, err = Load("dlpack.yaml", edit(t, `{since: "1.0", value: "1"}`, `{since: "1.0", value: "2"}`))
	require.ErrorContains(t, err, "DLPACK_MAJOR_VERSION is 2 in release 1.0")
	assert.Equal(t, 1, strings.Count(err.Error(), "DLPACK_MAJOR_VERSION is 2 in release 1.0"), err.Error())
	assert.NotContains(t, err.Error(), "in release 1.1", "reported for the first release only")
}
