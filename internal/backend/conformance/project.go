package conformance

import (
	"fmt"
	"strings"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// Distribution is the kit's name on PyPI; its wheels are named
// dlpack_conformance-VERSION-py3-none-any.whl.
const Distribution = "dlpack-conformance"

// Project is the kit's metadata as a Python distribution, in one place:
// pyproject.toml (Pyproject) says it to pip and its build backend
// (hatchling, which writes nothing into the directory it builds), and
// scripts/wheels writes the same into the wheel of `make wheels`
// (Metadata, EntryPoints). Its version is dlgen's (dlgen.Version).
var Project = struct {
	RequiresPython string
	Classifiers    []string
	Keywords       []string
	URLs           [][2]string // label, URL; the release's own pages
	Scripts        [][2]string // console command, module:function
	PytestPlugin   [2]string   // the pytest11 entry point: its name, its module
}{
	// The kit needs 3.10 (zip's strict=); the runner's workers use POSIX
	// pipes and select.
	RequiresPython: ">=3.10",
	Classifiers: []string{
		"Development Status :: 4 - Beta",
		"Framework :: Pytest",
		"Intended Audience :: Developers",
		"Intended Audience :: Science/Research",
		"Operating System :: MacOS",
		"Operating System :: POSIX :: Linux",
		"Programming Language :: Python :: 3",
		"Programming Language :: Python :: 3 :: Only",
		"Programming Language :: Python :: 3.10",
		"Programming Language :: Python :: 3.11",
		"Programming Language :: Python :: 3.12",
		"Programming Language :: Python :: 3.13",
		"Topic :: Scientific/Engineering",
		"Topic :: Software Development :: Quality Assurance",
		"Topic :: Software Development :: Testing",
	},
	Keywords: []string{"array-api", "conformance", "dlpack", "pytest", "tensor", "testing"}, // sorted, as hatchling writes them
	URLs: [][2]string{
		{"Homepage", "https://github.com/dlgen/dlgen"},
		{"Documentation", "https://github.com/dlgen/dlgen/blob/" + dlgen.Tag + "/docs/conformance-kit.md"},
		{"Source", "https://github.com/dlgen/dlgen"},
		{"Issues", "https://github.com/dlgen/dlgen/issues"},
		{"Changelog", "https://github.com/dlgen/dlgen/blob/" + dlgen.Tag + "/CHANGELOG.md"},
	},
	Scripts:      [][2]string{{"dlpack-conformance", Package + ".__main__:command"}, {"dlpack-sanitize", Package + ".sanitize:command"}},
	PytestPlugin: [2]string{Package, Package + ".pytest_plugin"},
}

// Summary is the one-line description of the kit of api's release.
func Summary(api *ir.API) string {
	return fmt.Sprintf("The DLPack v%s conformance kit: tests any array library's __dlpack__ and from_dlpack "+
		"from inside the capsule (a command and a pytest plugin)", api.Version())
}

// Pyproject is the kit's pyproject.toml for api's release: PEP 621
// metadata and hatchling as the build backend, so that `pip install
// DIR/conformance` installs the package, the dlpack-conformance command and
// the pytest plugin.
func Pyproject(api *ir.API) []byte {
	var b strings.Builder
	b.WriteString("# " + backend.Marker + "\n# " + backend.SPDX + "\n")
	b.WriteString("# The conformance kit as a Python project: `pip install .` here gives\n" +
		"# `python -m dlpack_conformance`, the dlpack-conformance command and the\n" +
		"# pytest plugin (`pytest -p dlpack_conformance --dlpack-library LIBRARY`).\n\n")
	b.WriteString("[build-system]\n")
	// 1.27 is the first hatchling to write a licence as an SPDX expression.
	b.WriteString("requires = [\"hatchling>=1.27\"]\nbuild-backend = \"hatchling.build\"\n\n")
	b.WriteString("[project]\n")
	fmt.Fprintf(&b, "name = %q\nversion = %q\ndescription = %q\n", Distribution, dlgen.Version, Summary(api))
	b.WriteString("readme = \"README.md\"\nlicense = \"Apache-2.0\"\n")
	fmt.Fprintf(&b, "requires-python = %q\n", Project.RequiresPython)
	b.WriteString("dependencies = []\n")
	b.WriteString("keywords = " + tomlList(Project.Keywords, "") + "\n")
	b.WriteString("classifiers = " + tomlList(Project.Classifiers, "    ") + "\n\n")
	b.WriteString("[project.urls]\n")
	for _, u := range Project.URLs {
		fmt.Fprintf(&b, "%s = %q\n", u[0], u[1])
	}
	b.WriteString("\n[project.scripts]\n")
	for _, s := range Project.Scripts {
		fmt.Fprintf(&b, "%s = %q\n", s[0], s[1])
	}
	b.WriteString("\n[project.entry-points.pytest11]\n")
	fmt.Fprintf(&b, "%s = %q\n", Project.PytestPlugin[0], Project.PytestPlugin[1])
	b.WriteString("\n[tool.hatch.build.targets.wheel]\npackages = [\"" + Package + "\"]\n")
	return []byte(b.String())
}

// tomlList is a TOML array of strings, one a line when indent is given.
func tomlList(items []string, indent string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	if indent == "" {
		return "[" + strings.Join(quoted, ", ") + "]"
	}
	return "[\n" + indent + strings.Join(quoted, ",\n"+indent) + ",\n]"
}

// Metadata is the core metadata (METADATA of a wheel, PKG-INFO) of the kit
// of api's release, readme its description and licenses the licence files
// the distribution carries, as hatchling writes it from Pyproject.
func Metadata(api *ir.API, readme []byte, licenses ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "Metadata-Version: 2.4\nName: %s\nVersion: %s\nSummary: %s\n", Distribution, dlgen.Version, Summary(api))
	fmt.Fprintf(&b, "Keywords: %s\n", strings.Join(Project.Keywords, ","))
	for _, u := range Project.URLs {
		fmt.Fprintf(&b, "Project-URL: %s, %s\n", u[0], u[1])
	}
	for _, c := range Project.Classifiers {
		fmt.Fprintf(&b, "Classifier: %s\n", c)
	}
	fmt.Fprintf(&b, "Requires-Python: %s\n", Project.RequiresPython)
	b.WriteString("Description-Content-Type: text/markdown\nLicense-Expression: Apache-2.0\n")
	for _, l := range licenses {
		fmt.Fprintf(&b, "License-File: %s\n", l)
	}
	b.WriteString("\n")
	b.Write(readme)
	return []byte(b.String())
}

// EntryPoints is the kit's entry_points.txt: its console command and its
// pytest plugin.
func EntryPoints() []byte {
	var b strings.Builder
	b.WriteString("[console_scripts]\n")
	for _, s := range Project.Scripts {
		fmt.Fprintf(&b, "%s = %s\n", s[0], s[1])
	}
	fmt.Fprintf(&b, "\n[pytest11]\n%s = %s\n", Project.PytestPlugin[0], Project.PytestPlugin[1])
	return []byte(b.String())
}
