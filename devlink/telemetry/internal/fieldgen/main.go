// Command fieldgen writes devlink/telemetry's fields_gen.go from the `tp`
// struct tags in telemetry.go: each kind's wire keys in writing order (a
// key's index is its bit in Frame.present) and the lookup from a wire key
// to the Go field it decodes into. It is run by `go generate` in
// devlink/telemetry; its test fails when fields_gen.go is stale.
//
// The rules it enforces: every field of a kind struct has a tag, keys are
// [a-z0-9]+ and unique within a kind (seq and up included), a kind has at
// most 32 keys, and each field has a wire type (see telemetry.go).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
)

func main() {
	src := flag.String("src", "telemetry.go", "Go file holding Frame and the kind structs")
	out := flag.String("out", "fields_gen.go", "file to write")
	flag.Parse()
	b, err := Generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fieldgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fieldgen:", err)
		os.Exit(1)
	}
}

// wireTypes maps a field's Go type to its wire type; uint64 only with the
// tenths option.
var wireTypes = map[string]string{
	"uint32":        "u32",
	"int32":         "i32",
	"uint16":        "u16",
	"time.Duration": "ms",
	"netip.Addr":    "ipv4",
	"safetext.Text": "word",
	"Path":          "addr",
	"bool":          "bool",
}

type field struct {
	goName string // "Status.Reset"
	key    string
}

type kind struct {
	name   string // Frame's field name: "Status"; the constant is "Kind"+name
	letter string
	fields []field // header fields first
}

// Generate returns the formatted fields_gen.go for the Go file src.
func Generate(src string) ([]byte, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, src, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	structs := map[string]*ast.StructType{}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, sp := range g.Specs {
			ts := sp.(*ast.TypeSpec)
			if st, ok := ts.Type.(*ast.StructType); ok {
				structs[ts.Name.Name] = st
			}
		}
	}
	frame := structs["Frame"]
	if frame == nil {
		return nil, fmt.Errorf("%s: no Frame struct", src)
	}
	var header []field
	var kinds []kind
	for _, fl := range frame.Fields.List {
		tag, ok := tpTag(fl)
		if !ok {
			continue
		}
		if len(fl.Names) != 1 {
			return nil, fmt.Errorf("a tagged field of Frame must have one name")
		}
		name := fl.Names[0].Name
		if len(tag) == 1 && tag[0] >= 'A' && tag[0] <= 'Z' {
			id, ok := fl.Type.(*ast.Ident)
			if !ok || structs[id.Name] == nil {
				return nil, fmt.Errorf("kind %s (Frame.%s) must be a struct type of this file", tag, name)
			}
			k := kind{name: name, letter: tag}
			if err := kindFields(&k, structs[id.Name], name); err != nil {
				return nil, err
			}
			kinds = append(kinds, k)
			continue
		}
		f, err := wireField(fl, name, tag)
		if err != nil {
			return nil, err
		}
		header = append(header, f)
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("no field of Frame is tagged with a kind letter")
	}
	letters := map[string]bool{}
	for i := range kinds {
		k := &kinds[i]
		if letters[k.letter] {
			return nil, fmt.Errorf("kind %s declared twice", k.letter)
		}
		letters[k.letter] = true
		k.fields = append(append([]field(nil), header...), k.fields...)
		if len(k.fields) > 32 {
			return nil, fmt.Errorf("kind %s has %d keys; Frame.present holds 32", k.letter, len(k.fields))
		}
		seen := map[string]bool{}
		for _, f := range k.fields {
			if seen[f.key] {
				return nil, fmt.Errorf("kind %s: key %q twice", k.letter, f.key)
			}
			seen[f.key] = true
		}
	}
	return render(header, kinds)
}

// tpTag returns the field's `tp` tag.
func tpTag(fl *ast.Field) (string, bool) {
	if fl.Tag == nil {
		return "", false
	}
	raw, err := strconv.Unquote(fl.Tag.Value)
	if err != nil {
		return "", false
	}
	return reflect.StructTag(raw).Lookup("tp")
}

func kindFields(k *kind, st *ast.StructType, prefix string) error {
	for _, fl := range st.Fields.List {
		if len(fl.Names) != 1 {
			return fmt.Errorf("%s: declare one field per line", prefix)
		}
		name := prefix + "." + fl.Names[0].Name
		tag, ok := tpTag(fl)
		if !ok {
			return fmt.Errorf("%s has no tp tag: every field of a kind struct is a wire field", name)
		}
		f, err := wireField(fl, name, tag)
		if err != nil {
			return err
		}
		k.fields = append(k.fields, f)
	}
	return nil
}

// wireField checks one tagged field: its key and that its Go type has a
// wire type.
func wireField(fl *ast.Field, name, tag string) (field, error) {
	key, opt, _ := strings.Cut(tag, ",")
	if key == "" || strings.Trim(key, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return field{}, fmt.Errorf("%s: key %q is not [a-z0-9]+", name, key)
	}
	var b bytes.Buffer
	if err := format.Node(&b, token.NewFileSet(), fl.Type); err != nil {
		return field{}, err
	}
	goType := b.String()
	switch {
	case opt == "tenths" && goType == "uint64":
	case opt == "tenths":
		return field{}, fmt.Errorf("%s: tenths needs uint64, not %s", name, goType)
	case opt != "":
		return field{}, fmt.Errorf("%s: unknown tag option %q", name, opt)
	case wireTypes[goType] == "":
		return field{}, fmt.Errorf("%s: Go type %s has no wire type", name, goType)
	}
	return field{goName: name, key: key}, nil
}

func render(header []field, kinds []kind) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("// Code generated by fieldgen from the tp tags in telemetry.go; DO NOT EDIT.\n")
	p("// Edit the tags and run go generate ./devlink/telemetry.\n\n")
	p("package telemetry\n\n")
	p("// Wire keys of each kind in the order writers use; a key's index is its\n// bit in Frame.present.\nvar (\n")
	for _, k := range kinds {
		keys := make([]string, len(k.fields))
		for i, f := range k.fields {
			keys[i] = strconv.Quote(f.key)
		}
		p("keys%s = []string{%s}\n", k.name, strings.Join(keys, ", "))
	}
	p(")\n\n")
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = "Kind" + k.name
	}
	p("// kinds are the frame kinds in declaration order.\nvar kinds = []Kind{%s}\n\n", strings.Join(names, ", "))
	p("// kindKeys returns the wire keys of kind k, or nil for an unknown kind.\n")
	p("func kindKeys(k Kind) []string {\nswitch k {\n")
	for _, k := range kinds {
		p("case Kind%s:\nreturn keys%s\n", k.name, k.name)
	}
	p("}\nreturn nil\n}\n\n")
	p("// field returns a pointer to the Go field wire key key decodes into for\n")
	p("// f.Kind, and its bit in f.present; nil when the kind has no such key.\n")
	p("func (f *Frame) field(key string) (any, uint32) {\nswitch key {\n")
	for i, h := range header {
		p("case %q:\nreturn &f.%s, 1 << %d\n", h.key, h.goName, i)
	}
	p("}\nswitch f.Kind {\n")
	for _, k := range kinds {
		p("case Kind%s:\nswitch key {\n", k.name)
		for i, f := range k.fields[len(header):] {
			p("case %q:\nreturn &f.%s, 1 << %d\n", f.key, f.goName, len(header)+i)
		}
		p("}\n")
	}
	p("}\nreturn nil, 0\n}\n")
	return format.Source(b.Bytes())
}
