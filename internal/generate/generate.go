// Package generate is everything cmd/dlgen does, minus flag parsing: Run
// settles one request (schema, release, languages, mode) in one place, then
// renders the backends and writes their files, checks them against what is
// on disk, lists what changed between two releases, lists the rules that
// judge such changes, or tells what release a C header is and how it
// differs from it (package cheader).
//
// A backend's error is named once, by the driver ("go backend: ..."); an
// element of the schema a backend refuses (a *backend.Error) becomes a
// schema.ErrorList at the element's position, as a malformed schema does.
//
// dlgen owns, under the output directory, the deepest directory that holds
// all files one language writes (c/dlpack, go/dlpack, python, rust/dlpack:
// each backend's output starts with the folder named as its language).
// A file there whose first line is the marker of any release of dlgen but
// which the run would not write (left from another DLPack release or version
// of dlgen) is removed by Write and reported by Check; other files there
// (build products, say) are left alone. A seed file (backend.File.Seed) is
// written only where there is none, and any file in its place is current.
//
// With -check, a backend whose output users build in place
// (backend.BuildChecker: the Cython module) also reports what under the
// output directory was built from other sources than the run's.
//
// Write and Check read, write and remove only inside the output directory,
// opened once as an os.Root (outdir*.go, the files here that touch the
// output tree): a symbolic link there that leads out of it is an error that
// names it, and so is anything but a regular file where a file is read or
// written (a named pipe would block), both found before anything is
// written. A file is rewritten by writing a new one and renaming it over
// the old, never through it: a hard link to a file outside keeps its
// content.
package generate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/abidiff"
	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/cheader"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/pmezard/go-difflib/difflib"
)

// Languages returns the names of all backends.
func Languages() []string {
	var names []string
	for _, r := range backend.Registered() {
		names = append(names, r.Name)
	}
	return names
}

// Request is one run of dlgen as its flags spell it. Zero values mean the
// defaults.
type Request struct {
	SchemaFile string // "" means the embedded schema
	Out        string // where to write; required when generating
	Lang       string // comma-separated; "" means every language
	LangGiven  bool   // -lang was given on the command line: an empty Lang is then a mistake
	Version    string // the release to emit; "" means the newest
	Check      bool   // compare instead of writing
	DiffFrom   string // list what changed from this release instead of generating
	DiffRules  bool   // list the rules of DiffFrom instead of generating
	// BackendOptions are the values of the backends' own flags
	// (backend.Option), by flag name; "" means not given.
	BackendOptions map[string]string
	Identify       string // a C header to identify instead of generating
	SchemaYAML     bool   // with Identify: write what the header adds to the schema, as YAML
}

// UsageError is a request that cannot be carried out as asked: flags that
// do not combine, an unknown language or release. dlgen exits 2.
type UsageError struct{ msg string }

// Error says what cannot be done, as dlgen prints it.
func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// DriftError is -check's finding: the output directory is stale, or
// missing. dlgen exits 1.
type DriftError struct {
	msg     string
	Dir     string // the stale -out; "" for -identify's finding
	Missing bool   // -out does not exist: nothing to check
}

// Error says which output is stale.
func (e *DriftError) Error() string { return e.msg }

// BreakingChangeError is -diff's finding: Count ABI or API findings break
// code written for release From under release To. dlgen exits 1.
type BreakingChangeError struct {
	From, To ir.Version // the releases compared
	Count    int        // the findings of category ABI or API
}

// Error is "N breaking changes from From to To" ("1 breaking change").
func (e *BreakingChangeError) Error() string {
	noun := "breaking changes"
	if e.Count == 1 {
		noun = "breaking change"
	}
	return fmt.Sprintf("%d %s from %s to %s", e.Count, noun, e.From, e.To)
}

// Run carries out req, printing diffs, findings or rules to stdout. Its
// error is a *UsageError, a schema.ErrorList, a *DriftError, a
// *BreakingChangeError, a *LinkError (a link under -out that leads out of
// it), a *NotFileError (a named pipe, say, where a file goes), or an I/O
// error.
func Run(req Request, stdout io.Writer) error {
	selected, err := req.validate()
	if err != nil {
		return err
	}
	if req.DiffRules {
		return listRules(stdout)
	}
	s, name, err := load(req.SchemaFile)
	if err != nil {
		return err
	}
	if req.Identify != "" {
		return identify(s, req.Identify, req.SchemaYAML, stdout)
	}
	v, err := parseRelease(s, req.Version, "-dlpack-version")
	if err != nil {
		return err
	}
	if req.DiffFrom != "" {
		from, err := parseRelease(s, req.DiffFrom, "-diff")
		if err != nil {
			return err
		}
		return diff(s, from, v, stdout)
	}
	if req.Out == "" { // bare dlgen would scatter each language's folder over the current directory
		return usagef("-out is missing: pass -out DIR, the directory to write %s into (-out . for the current one)", folders(selected))
	}
	j := job{schema: s, schemaName: name, version: v, backends: selected, options: req.BackendOptions}
	files, err := j.files()
	if err != nil {
		return err
	}
	out := req.Out
	if !req.Check {
		_, err := Write(out, files)
		return err
	}
	if exists, err := outExists(out); err != nil || !exists { // a 2,000-line diff of new files would say less
		if err == nil {
			err = &DriftError{msg: "-out " + out + " does not exist: nothing to check", Dir: out, Missing: true}
		}
		return err
	}
	report, err := Check(out, files)
	if err != nil {
		return err
	}
	stale, err := j.staleBuilds(out, files)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, report)
	for _, line := range stale {
		fmt.Fprintln(stdout, line)
	}
	switch {
	case report != "":
		return &DriftError{msg: out + " is stale", Dir: out}
	case len(stale) == 1:
		return &DriftError{msg: "a compiled module under " + out + " is older than its sources: rebuild it as above"}
	case len(stale) > 1:
		return &DriftError{msg: fmt.Sprintf("%d compiled modules under %s are older than their sources: rebuild them as above", len(stale), out)}
	}
	return nil
}

// staleBuilds asks each backend of j that users build in place
// (backend.BuildChecker) for what under out was built from other sources
// than files: -check's report of builds older than their sources.
func (j job) staleBuilds(out string, files []backend.File) ([]string, error) {
	root, err := openOut(out, false)
	if err != nil || root.root == nil {
		return nil, err
	}
	defer root.Close()
	var lines []string
	for _, r := range j.backends {
		if bc, ok := r.New(backend.Config{Options: j.options}).(backend.BuildChecker); ok {
			found, err := bc.StaleBuilds(root.root.FS(), out, files)
			if err != nil {
				return nil, err
			}
			lines = append(lines, found...)
		}
	}
	return lines, nil
}

// emptyLanguageError is the error of a -lang list with an empty name in it
// ("c,,go", ","; "" given on the command line).
func emptyLanguageError(lang string) error {
	return usagef("-lang %q has an empty name in its list; name languages separated by commas (known: %s), or leave -lang out for all of them", lang, strings.Join(Languages(), ", "))
}

// validate rejects flags that do not combine and unknown languages, before
// anything is read, and returns the backends -lang selects: the one place
// -lang is read.
func (req Request) validate() ([]backend.Registration, error) {
	if req.LangGiven && req.Lang == "" {
		return nil, emptyLanguageError(req.Lang)
	}
	langs, err := splitLanguages(req.Lang)
	if err != nil {
		return nil, err
	}
	selected, err := selectBackends(langs)
	if err != nil {
		return nil, err
	}
	return selected, req.combine(langs)
}

// combine rejects flags that do not combine.
func (req Request) combine(langs []string) error {
	given, err := req.givenOptions()
	if err != nil {
		return err
	}
	if req.DiffRules && (len(given) > 0 || req.SchemaFile != "" || req.Out != "" || req.Lang != "" || req.Version != "" ||
		req.Check || req.DiffFrom != "" || req.Identify != "" || req.SchemaYAML) {
		return usagef("-diff-rules lists the rules of -diff, the same for every schema and release, and combines with no other flag")
	}
	for _, g := range given {
		if err := g.check(langs); err != nil {
			return err
		}
	}
	if req.SchemaYAML && req.Identify == "" {
		return usagef("-schema-yaml applies to -identify only")
	}
	if req.Identify != "" {
		if req.Check || req.DiffFrom != "" || req.Lang != "" || req.Out != "" || req.Version != "" || len(given) > 0 {
			return usagef("-identify combines with -schema and -schema-yaml only: it reads a header and writes nothing")
		}
		return nil
	}
	if req.DiffFrom == "" {
		return nil
	}
	switch {
	case req.Check:
		return usagef("-check and -diff do not combine: -diff compares two releases, -check compares one with -out")
	case req.Lang != "":
		return usagef("-lang does not apply to -diff, which compares the ABI every language shares")
	case req.Out != "":
		return usagef("-out does not apply to -diff, which writes nothing")
	case len(given) > 0:
		return usagef("-%s does not apply to -diff, which writes nothing", given[0].Flag)
	}
	return nil
}

// givenOption is a backend's flag given a value, with its backend.
type givenOption struct {
	backend.Option
	owner string // the backend that takes it
	value string
}

// check says why the option cannot be used with the languages langs: its
// backend is not among them, or its value is unusable.
func (g givenOption) check(langs []string) error {
	if g.Check != nil {
		if err := g.Check(g.value); err != nil {
			return usagef("%v", err)
		}
	}
	if len(langs) > 0 && !slices.Contains(langs, g.owner) {
		return usagef("-%s applies to -lang %s only", g.Flag, g.owner)
	}
	return nil
}

// givenOptions lists the backends' flags req gives a value, by flag name,
// or a usage error for a flag no backend takes.
func (req Request) givenOptions() ([]givenOption, error) {
	var out []givenOption
	for _, r := range backend.Registered() {
		for _, o := range r.Options {
			if v := req.BackendOptions[o.Flag]; v != "" {
				out = append(out, givenOption{Option: o, owner: r.Name, value: v})
			}
		}
	}
	for flag, v := range req.BackendOptions {
		if v != "" && !slices.ContainsFunc(out, func(g givenOption) bool { return g.Flag == flag }) {
			return nil, usagef("no backend takes -%s", flag)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Flag < out[j].Flag })
	return out, nil
}

func load(file string) (s *ir.Schema, name string, err error) {
	if file == "" {
		s, err = schema.Default()
		return s, schema.DefaultFile, err
	}
	s, err = schema.LoadFile(file)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		err = usagef("-schema %s: %v (give -schema a YAML schema file, or leave it out for the embedded one)", file, pathErr.Err)
	}
	return s, file, err
}

// parseRelease parses the value of flag, "" meaning the newest release.
func parseRelease(s *ir.Schema, text, flag string) (ir.Version, error) {
	if text == "" {
		return s.Newest(), nil
	}
	v, err := s.ParseRelease(text)
	if err != nil {
		return v, usagef("%s: %v", flag, err)
	}
	return v, nil
}

// release settles which release to emit: v, or the newest if v is zero,
// looked up as -dlpack-version's text is (ir.Schema.ParseRelease).
func release(s *ir.Schema, v ir.Version) (ir.Version, error) {
	if v == (ir.Version{}) {
		return s.Newest(), nil
	}
	settled, err := s.ParseRelease(v.String())
	if err != nil {
		return v, usagef("%v", err)
	}
	return settled, nil
}

// folders lists the top folders the backends write, one per language named
// as it is: "c/, go/, python/ and rust/".
func folders(backends []backend.Registration) string {
	var names []string
	for _, r := range backends {
		names = append(names, r.Name+"/")
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// splitLanguages splits -lang's list, nil for none; an empty name in it
// ("c,,go", ",") is an emptyLanguageError.
func splitLanguages(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, emptyLanguageError(s)
		}
		out = append(out, p)
	}
	return out, nil
}

// diff prints the findings of abidiff from release from to release to.
func diff(s *ir.Schema, from, to ir.Version, stdout io.Writer) error {
	breaking := 0
	for _, f := range abidiff.Compare(s.At(from), s.At(to)) {
		fmt.Fprintln(stdout, f)
		if f.Breaking() {
			breaking++
		}
	}
	if breaking > 0 {
		return &BreakingChangeError{From: from, To: to, Count: breaking}
	}
	return nil
}

// listRules prints every rule of abidiff with its category and purpose, in
// aligned columns under a header line.
func listRules(stdout io.Writer) error {
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tCATEGORY\tPURPOSE")
	for _, r := range abidiff.Rules {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.ID, r.Category, r.Purpose)
	}
	return w.Flush()
}

// identify prints the release the header at path matches and how it
// differs from it (a difference is a DriftError), or, with schemaYAML, what
// it adds to the schema's newest release, as schema YAML.
func identify(s *ir.Schema, path string, schemaYAML bool, stdout io.Writer) error {
	h, err := cheader.ReadFile(path)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return usagef("-identify %s: %v (give -identify a DLPack header file)", path, pathErr.Err)
	}
	if err != nil {
		return err
	}
	if schemaYAML {
		out, err := cheader.Additions(s, h)
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	r := cheader.Identify(s, h)
	fmt.Fprint(stdout, r)
	if len(r.Findings) > 0 {
		return &DriftError{msg: fmt.Sprintf("%s differs from DLPack %s", path, r.Release)}
	}
	return nil
}

// Options says what to generate from a loaded schema.
type Options struct {
	Schema     *ir.Schema // the loaded, validated schema
	SchemaName string     // how generated files name the schema
	Version    ir.Version // zero means the newest
	Langs      []string   // empty means all
	// BackendOptions are the values of the backends' own flags
	// (backend.Option), by flag name, as in Request.
	BackendOptions map[string]string
}

// Files renders the selected backends for the selected release, sorted by
// path.
func Files(opts Options) ([]backend.File, error) {
	v, err := release(opts.Schema, opts.Version)
	if err != nil {
		return nil, err
	}
	selected, err := selectBackends(opts.Langs)
	if err != nil {
		return nil, err
	}
	return job{schema: opts.Schema, schemaName: opts.SchemaName, version: v, backends: selected, options: opts.BackendOptions}.files()
}

// job is one request settled: its schema, a release of it, the backends
// selected and their options, each read from the flags once.
type job struct {
	schema     *ir.Schema
	schemaName string
	version    ir.Version
	backends   []backend.Registration
	options    map[string]string
}

// files renders j's backends, sorted by path.
func (j job) files() ([]backend.File, error) {
	config := backend.Config{Schema: j.schemaName, Options: j.options}
	api := j.schema.At(j.version)
	var files []backend.File
	for _, r := range j.backends {
		b := r.New(config)
		fs, err := render(b, api)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
		if hu, ok := b.(backend.HeaderUser); ok && hu.Header(api) != "" {
			headers, err := supplied("the C headers", func(r backend.Registration) bool { return r.Headers }, j.schemaName, api)
			if err != nil {
				return nil, err
			}
			dir := path.Dir(hu.Header(api))
			for _, h := range headers {
				files = append(files, backend.File{Path: path.Join(dir, path.Base(h.Path)), Content: h.Content})
			}
		}
		if ru, ok := b.(backend.ReferenceUser); ok {
			module, err := reference(j.schemaName, api)
			if err != nil {
				return nil, err
			}
			files = append(files, backend.File{Path: ru.Reference(api), Content: module})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// render runs b on api and names b in its error, once. An element b
// refuses (a *backend.Error) becomes a positioned schema error.
func render(b backend.Backend, api *ir.API) ([]backend.File, error) {
	files, err := b.Generate(api)
	var refused *backend.Error
	switch {
	case err == nil:
		return files, nil
	case errors.As(err, &refused):
		return nil, schema.ErrorList{{Pos: refused.Pos, Msg: b.Name() + " backend: " + refused.Msg}}
	default:
		return nil, fmt.Errorf("%s backend: %w", b.Name(), err)
	}
}

// supplied renders the registered backend that has what another backend
// ships a copy of (backend.Registration's Headers or Reference), with no
// options of its own; what names that in an error.
func supplied(what string, has func(backend.Registration) bool, schemaName string, api *ir.API) ([]backend.File, error) {
	r, ok := backend.Supplier(has)
	if !ok {
		return nil, fmt.Errorf("no registered backend renders %s", what)
	}
	return render(r.New(backend.Config{Schema: schemaName}), api)
}

// reference renders the module a ReferenceUser ships: the file at the
// Reference path of the backend registered with one.
func reference(schemaName string, api *ir.API) ([]byte, error) {
	has := func(r backend.Registration) bool { return r.Reference != "" }
	fs, err := supplied("the reference module", has, schemaName, api)
	if err != nil {
		return nil, err
	}
	r, _ := backend.Supplier(has)
	for _, f := range fs {
		if f.Path == r.Reference {
			return f.Content, nil
		}
	}
	return nil, fmt.Errorf("%s backend wrote no %s", r.Name, r.Reference)
}

// selectBackends returns the backends langs names, each once, in their
// order, or every backend -lang's default selects for none.
func selectBackends(langs []string) ([]backend.Registration, error) {
	if len(langs) == 0 {
		var out []backend.Registration
		for _, r := range backend.Registered() {
			if !r.ByNameOnly {
				out = append(out, r)
			}
		}
		return out, nil
	}
	var out []backend.Registration
	for _, l := range langs {
		r, ok := backend.Lookup(l)
		if !ok {
			return nil, usagef("unknown language %q (known: %s)", l, strings.Join(Languages(), ", "))
		}
		if !slices.ContainsFunc(out, func(o backend.Registration) bool { return o.Name == l }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Write writes files under dir, touching only files whose content changed,
// removes the left-overs (see the package doc), and returns the paths it
// wrote or removed. It reads, writes and removes only inside dir, through
// dir opened once as an os.Root: a symbolic link under dir that leads out
// of it is a *LinkError, found before anything is written.
func Write(dir string, files []backend.File) ([]string, error) {
	out, err := openOut(dir, true)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	if err := out.confine(paths(files)); err != nil {
		return nil, err
	}
	stale, err := leftOvers(out, files)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, f := range files {
		old, err := out.readFile(f.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return written, err
		}
		if err == nil && (f.Seed || bytes.Equal(old, f.Content)) {
			continue
		}
		if err := out.writeFile(f.Path, f.Content); err != nil {
			return written, err
		}
		written = append(written, out.path(f.Path))
	}
	for _, rel := range stale {
		if err := out.remove(rel); err != nil {
			return written, err
		}
		written = append(written, out.path(rel))
	}
	return written, nil
}

// Check compares files with what is under dir and returns a unified diff of
// every difference, a patch that `git apply -p0` (or `patch -p0`) applies
// from where dlgen ran: a missing file is created from /dev/null, and every
// left-over file, named first by a line "Only in DIR: NAME", is deleted;
// "" means current. It reads only inside dir, as Write does.
func Check(dir string, files []backend.File) (string, error) {
	root, err := openOut(dir, false)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.confine(paths(files)); err != nil {
		return "", err
	}
	var out strings.Builder
	for _, f := range files {
		old, err := root.readFile(f.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if err == nil && (f.Seed || bytes.Equal(old, f.Content)) {
			continue
		}
		name := filepath.ToSlash(root.path(f.Path))
		if err != nil {
			out.WriteString(wholeFile("/dev/null", name+generatedLabel, '+', f.Content))
			continue
		}
		diff, derr := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: lines(old), B: lines(f.Content),
			FromFile: name, ToFile: name + generatedLabel, Context: 3,
		})
		if derr != nil {
			return "", derr
		}
		out.WriteString(diff)
	}
	stale, err := leftOvers(root, files)
	if err != nil {
		return "", err
	}
	for _, rel := range stale {
		p := filepath.ToSlash(root.path(rel))
		fmt.Fprintf(&out, "Only in %s: %s\n", path.Dir(p), path.Base(p))
		content, err := root.readFile(rel)
		if err != nil {
			return "", err
		}
		out.WriteString(wholeFile(p, "/dev/null", '-', content))
	}
	return out.String(), nil
}

// paths lists the paths of files.
func paths(files []backend.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// generatedLabel follows the name of what dlgen would write. After a tab,
// where diff puts a timestamp, patch tools read it as no part of the name.
const generatedLabel = "\t(generated)"

// wholeFile is the diff that creates (sign '+') or deletes ('-') a file of
// content.
func wholeFile(from, to string, sign byte, content []byte) string {
	lines := lines(content)
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	if len(content) == 0 {
		return b.String()
	}
	if sign == '+' {
		fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", len(lines))
	} else {
		fmt.Fprintf(&b, "@@ -1,%d +0,0 @@\n", len(lines))
	}
	for _, l := range lines {
		b.WriteByte(sign)
		b.WriteString(l)
	}
	if !bytes.HasSuffix(content, []byte("\n")) {
		b.WriteString("\\ No newline at end of file\n")
	}
	return b.String()
}

// lines splits content into lines for a diff, each ending in a newline (the
// last gets one if it lacks it). difflib.SplitLines adds an empty line after
// the last, which a patch tool then looks for and does not find.
func lines(content []byte) []string {
	out := strings.SplitAfter(string(content), "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	} else {
		out[len(out)-1] += "\n"
	}
	return out
}

// owned returns the directories dlgen owns for files: per top-level
// directory, the deepest one holding all of that directory's files.
func owned(files []backend.File) []string {
	roots := map[string]string{}
	for _, f := range files {
		dir := path.Dir(f.Path)
		top, _, _ := strings.Cut(f.Path, "/")
		root, ok := roots[top]
		if !ok {
			roots[top] = dir
			continue
		}
		for root != "." && dir != root && !strings.HasPrefix(dir, root+"/") {
			root = path.Dir(root)
		}
		roots[top] = root
	}
	var out []string
	for _, r := range roots {
		if r != "." {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// leftOvers lists the files under the directories owned for files that
// carry dlgen's marker but are not among files, in lexical order, as paths
// under out. A link is never one, nor followed.
func leftOvers(out *outDir, files []backend.File) ([]string, error) {
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Path] = true
	}
	var stale []string
	for _, root := range owned(files) {
		err := out.walkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !d.Type().IsRegular() || keep[p] {
				return nil
			}
			marked, err := carriesMarker(out, p)
			if marked {
				stale = append(stale, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return stale, nil
}

// carriesMarker reports whether the file at p starts as every file dlgen
// writes does: a first line that is the marker of some release of dlgen
// (dlgen.IsMarker), in one of the comment syntaxes dlgen writes it in. A
// file that merely mentions the marker (a user's notes, say) is not dlgen's
// to remove.
func carriesMarker(out *outDir, p string) (bool, error) {
	f, err := out.open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	first := bufio.NewScanner(io.LimitReader(f, 256))
	if !first.Scan() {
		return false, nil
	}
	line := strings.TrimSuffix(first.Text(), "\r")
	for _, lead := range []string{"// ", "# ", "/* "} {
		if marker, ok := strings.CutPrefix(line, lead); ok && dlgen.IsMarker(marker) {
			return true, nil
		}
	}
	return false, nil
}
