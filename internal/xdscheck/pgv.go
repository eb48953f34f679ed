package xdscheck

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// fieldError is what protoc-gen-validate's errors say about one field:
// its Go name (with an index or key), why, and for an embedded message
// the errors inside it.
type fieldError interface {
	Field() string
	Reason() string
	Cause() error
}

// multiError is protoc-gen-validate's list of errors from ValidateAll.
type multiError interface{ AllErrors() []error }

// describe rewrites a ValidateAll error of m as one problem per failing
// field, each naming the field by its path of proto names and its value:
// "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value:
// 70000: value must be less than or equal to 65535". The errors only name
// Go fields and the rule, and a condition must say what the value was.
func describe(m protoreflect.Message, err error) []string {
	var out []string
	var walk func(err error, m protoreflect.Message, path string)
	walk = func(err error, m protoreflect.Message, path string) {
		if me, ok := err.(multiError); ok {
			for _, e := range me.AllErrors() {
				walk(e, m, path)
			}
			return
		}
		fe, ok := err.(fieldError)
		if !ok {
			out = append(out, join(path, err.Error()))
			return
		}
		name, v, found := step(m, fe.Field())
		p := join(path, name)
		switch {
		case found && fe.Cause() != nil && isMessage(v):
			walk(fe.Cause(), v.Message(), p)
		case found && !isMessage(v):
			out = append(out, fmt.Sprintf("%s: %s: %s", p, format(v), fe.Reason()))
		default:
			out = append(out, fmt.Sprintf("%s: %s", p, fe.Reason()))
		}
	}
	walk(err, m, "")
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// step finds the field a protoc-gen-validate error names in m ("Endpoints[0]",
// "PortValue", "Metadata[key]") and returns its proto name, with the index
// or key, and its value.
func step(m protoreflect.Message, field string) (string, protoreflect.Value, bool) {
	goName, index, indexed := strings.Cut(field, "[")
	index = strings.TrimSuffix(index, "]")
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if goCamel(string(fd.Name())) != goName {
			continue
		}
		name := string(fd.Name())
		v := m.Get(fd)
		switch {
		case !indexed:
			return name, v, m.Has(fd) || fd.Message() == nil
		case fd.IsList():
			n, err := strconv.Atoi(index)
			if err != nil || n < 0 || n >= v.List().Len() {
				return name + "[" + index + "]", protoreflect.Value{}, false
			}
			return name + "[" + index + "]", v.List().Get(n), true
		case fd.IsMap() && fd.MapKey().Kind() == protoreflect.StringKind:
			mv := v.Map().Get(protoreflect.ValueOfString(index).MapKey())
			return name + "[" + strconv.Quote(index) + "]", mv, mv.IsValid()
		}
		return name + "[" + index + "]", protoreflect.Value{}, false
	}
	return field, protoreflect.Value{}, false
}

// goCamel is the Go name protoc-gen-go gives a proto field name.
func goCamel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up && 'a' <= r && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			up = false
		default:
			b.WriteRune(r)
			up = '0' <= r && r <= '9'
		}
	}
	return b.String()
}

func isMessage(v protoreflect.Value) bool {
	_, ok := v.Interface().(protoreflect.Message)
	return ok
}

// format prints a field's value for a problem. A repeated or map field
// fails only rules on its size (min_items), so it is described by its
// size; printed as a value, it would show Go pointers.
func format(v protoreflect.Value) string {
	switch x := v.Interface().(type) {
	case protoreflect.List:
		return count(x.Len(), "item", "items")
	case protoreflect.Map:
		return count(x.Len(), "entry", "entries")
	}
	if s, ok := v.Interface().(string); ok {
		return strconv.Quote(s)
	}
	if b, ok := v.Interface().([]byte); ok {
		return fmt.Sprintf("%d bytes", len(b))
	}
	return v.String()
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
