// Package deep validates protobuf messages all the way down. The
// ValidateAll methods generated for Envoy's API (protoc-gen-validate) check
// a message and its nested messages but stop at google.protobuf.Any, which
// is where Envoy keeps most of its configuration: the HTTP connection
// manager inside a listener, the filters inside it, transport sockets,
// protocol options. A resource can pass ValidateAll and still be refused by
// Envoy; Validate opens every Any and checks what is inside too.
package deep

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// Validate runs m's ValidateAll, if it has one, then unpacks every Any in
// m, at any depth, and validates its content the same way. A type URL that
// is not linked into the program is an error: what cannot be checked is
// not served.
func Validate(m proto.Message) error {
	if v, ok := m.(interface{ ValidateAll() error }); ok {
		if err := v.ValidateAll(); err != nil {
			return err
		}
	}
	return walk(m.ProtoReflect())
}

// walk finds the Any fields of m, at any depth, and validates their
// contents with Validate.
func walk(m protoreflect.Message) error {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			return fmt.Errorf("%s: %w", a.GetTypeUrl(), err)
		}
		if err := Validate(inner); err != nil {
			return fmt.Errorf("%s: %w", a.GetTypeUrl(), err)
		}
		return nil
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = walk(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				err = walk(mv.Message())
				return err == nil
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			err = walk(v.Message())
		}
		return err == nil
	})
	return err
}
