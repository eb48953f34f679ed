// Package apiref writes the API reference, site/reference/api.md, from the
// Go types of apis/switchyard/...: their doc comments and kubebuilder
// validation markers, the same source controller-gen writes the CRDs from,
// so the reference cannot say something the API server does not enforce.
// `make apidocs` regenerates the page; a test fails when it is stale.
//
// It reads the source with go/parser instead of importing the packages, so
// that it documents exactly what is written, markers included, which the
// compiled types do not keep.
package apiref

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Package is one API package: a group version and its types, in source
// order.
type Package struct {
	Name         string // Go package name, such as v1
	ImportPath   string
	GroupVersion string // such as switchyard.dev/v1
	Doc          string
	Types        []*Type
}

// Type is a named type of an API package: a struct or a string type.
type Type struct {
	Name    string
	Doc     string
	Markers []string // kubebuilder markers, without the leading '+'
	Root    bool     // a kind: +kubebuilder:object:root=true, not a List
	Struct  bool
	Fields  []*Field
	Under   string // the underlying type of a non-struct type
	pkg     *Package
}

// Field is a field of a struct type.
type Field struct {
	GoName   string
	JSONName string // empty for an inline embedded field
	Inline   bool
	Optional bool
	Doc      string
	Markers  []string
	Type     ast.Expr
	imports  map[string]string // the file's import names to paths
}

// Parse reads the Go package in dir (skipping tests and generated files),
// whose import path is importPath.
func Parse(dir, importPath string) (*Package, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &Package{ImportPath: importPath}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		p.Name = f.Name.Name
		if f.Doc != nil {
			doc, markers := splitComment(f.Doc)
			if p.Doc == "" {
				p.Doc = doc
			}
			for _, m := range markers {
				if g, ok := strings.CutPrefix(m, "groupName="); ok {
					p.GroupVersion = g + "/" + f.Name.Name
				}
			}
		}
		p.addTypes(f)
	}
	if p.GroupVersion == "" {
		return nil, fmt.Errorf("%s: no +groupName marker in the package comment", dir)
	}
	return p, nil
}

func (p *Package) addTypes(f *ast.File) {
	imports := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
	}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			comment := ts.Doc
			if comment == nil {
				comment = gd.Doc
			}
			t := &Type{Name: ts.Name.Name, pkg: p}
			t.Doc, t.Markers = splitComment(comment)
			t.Root = slices.Contains(t.Markers, "kubebuilder:object:root=true") && !strings.HasSuffix(t.Name, "List")
			if st, ok := ts.Type.(*ast.StructType); ok {
				t.Struct, t.Fields = true, fields(st, imports)
			} else {
				t.Under = goType(ts.Type)
			}
			p.Types = append(p.Types, t)
		}
	}
}

func fields(st *ast.StructType, imports map[string]string) []*Field {
	var out []*Field
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			raw, _ := strconv.Unquote(f.Tag.Value)
			tag = reflect.StructTag(raw).Get("json")
		}
		name, opts, _ := strings.Cut(tag, ",")
		fd := &Field{JSONName: name, Type: f.Type, imports: imports}
		fd.Doc, fd.Markers = splitComment(f.Doc)
		fd.Inline = len(f.Names) == 0 && strings.Contains(opts, "inline")
		fd.Optional = slices.Contains(fd.Markers, "optional") || strings.Contains(opts, "omitempty")
		if len(f.Names) > 0 {
			fd.GoName = f.Names[0].Name
		} else {
			fd.GoName = goType(f.Type)
		}
		out = append(out, fd)
	}
	return out
}

// goType is the Go spelling of a type expression, for non-struct types.
func goType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return goType(e.X)
	case *ast.SelectorExpr:
		return goType(e.X) + "." + e.Sel.Name
	case *ast.ArrayType:
		return "[]" + goType(e.Elt)
	case *ast.MapType:
		return "map[" + goType(e.Key) + "]" + goType(e.Value)
	}
	return fmt.Sprintf("%T", e)
}

// splitComment returns a comment's text, marker lines removed, and its
// markers (lines starting with '+').
func splitComment(g *ast.CommentGroup) (string, []string) {
	if g == nil {
		return "", nil
	}
	var text []string
	var markers []string
	for _, line := range strings.Split(g.Text(), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "+"); ok {
			markers = append(markers, m)
			continue
		}
		text = append(text, line)
	}
	return strings.TrimSpace(strings.Join(text, "\n")), markers
}

// Module is the import path of the repository's module.
const Module = "github.com/switchyard-dev/switchyard"

// APIDir is where the API packages live, one directory per version.
const APIDir = "apis/switchyard"

// Generate returns the API reference of the packages under root's
// apis/switchyard, in directory order (v1 before v1alpha1).
func Generate(root string) ([]byte, error) {
	entries, err := os.ReadDir(filepath.Join(root, APIDir))
	if err != nil {
		return nil, err
	}
	var pkgs []*Package
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p, err := Parse(filepath.Join(root, APIDir, e.Name()), Module+"/"+APIDir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return Render(pkgs), nil
}

// Page is the reference's path in the repository.
const Page = "site/reference/api.md"
