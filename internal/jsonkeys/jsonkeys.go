// Package jsonkeys checks the one JSON vocabulary of the documents the commands print with
// -o json: every key lowerCamelCase, as Kubernetes' own. A field without a json tag is marshalled
// under its Go name (`Namespace`), which is how the exception got in once.
package jsonkeys

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// module is this module's import path: types from elsewhere (metav1.Condition, metav1.Time) keep
// their own keys and are not walked.
const module = "github.com/kubectl-mcs/kubectl-mcs/"

var lowerCamel = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

var marshaler = reflect.TypeFor[json.Marshaler]()

// Check walks t (structs, through pointers, slices, arrays and map values) and returns one line
// per exported field of this module's types that would be marshalled under a key that is not
// lowerCamelCase: "synccmd.Report.Conflicts[].Namespace: no json tag".
func Check(t reflect.Type) []string {
	var out []string
	walk(t, typeName(t), map[reflect.Type]bool{}, &out)
	return out
}

func walk(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	switch t.Kind() {
	case reflect.Pointer:
		walk(t.Elem(), path, seen, out)
		return
	case reflect.Slice, reflect.Array:
		walk(t.Elem(), path+"[]", seen, out)
		return
	case reflect.Map:
		walk(t.Elem(), path+"{}", seen, out)
		return
	case reflect.Struct:
	default:
		return
	}
	if seen[t] || !strings.HasPrefix(t.PkgPath()+"/", module) || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag, hasTag := f.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
			continue
		case f.Anonymous && name == "":
			walk(f.Type, path, seen, out) // inlined, as encoding/json does
		case !hasTag || name == "":
			*out = append(*out, fmt.Sprintf("%s.%s: no json tag (marshalled as %q)", path, f.Name, f.Name))
		case !lowerCamel.MatchString(name):
			*out = append(*out, fmt.Sprintf("%s.%s: json key %q is not lowerCamelCase", path, f.Name, name))
		default:
			walk(f.Type, path+"."+f.Name, seen, out)
		}
	}
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if i := strings.LastIndex(t.PkgPath(), "/"); i >= 0 {
		return t.PkgPath()[i+1:] + "." + t.Name()
	}
	return t.String()
}
