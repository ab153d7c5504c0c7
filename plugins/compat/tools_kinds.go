package compat

import (
	"strconv"

	"github.com/runedge/runedge/plugins/guestjson"
	nativewire "github.com/runedge/runedge/runner/native"
)

// The Responses API's other tool kinds, as clients such as Codex send them:
//
//   - namespace {"name","description","tools":[function or custom…]}: each
//     inner tool is offered under its own name (qualified as
//     <namespace>__<name> when another tool has that name), its description headed by
//     the namespace's; a call of it comes back with "namespace" set. The
//     native tool keeps "namespace" (and "custom":true for a custom tool),
//     for the host's stream framing.
//   - custom {"name","description","format"}: free-form input, offered as a
//     function of one string argument, input; a call of it comes back as a
//     custom_tool_call whose input is that string. A grammar (format
//     {"type":"grammar","syntax","definition"}) cannot be passed to a
//     chat-completions upstream, so it is put in the argument's description
//     for the model to follow; it is not enforced.
//   - anything else (web_search, file_search, code_interpreter, mcp,
//     image_generation, computer and shell types …) is a hosted tool the
//     agent cannot run: it is withheld, not offered to the model, and
//     listed in the native request's withheld_tools so that the run records
//     it and the host counts it (or refuses it, tools.hosted: refuse).

// appendResponsesTool appends tools[i] of a responses body in native form:
// nothing for a withheld tool, several for a namespace.
func (o *toolOptions) appendResponsesTool(dst []byte, t value, i int) ([]byte, error) {
	where := indexed("tools", i)
	if !t.IsObject() {
		return dst, invalid(where, "each tool must be an object with a type")
	}
	typ := t.Get("type")
	switch {
	case typ.Is("function"):
		return o.appendFunction(dst, t, where, false, "", "")
	case typ.Is("custom"):
		return o.appendCustom(dst, t, where, "", "")
	case typ.Is("namespace"):
		return o.appendNamespace(dst, t, where)
	case !typ.IsString() || typ == `""`:
		return dst, invalid(where+".type", where+".type must be a tool type such as function")
	}
	if o.withheld != nil {
		o.withheld = append(o.withheld, ',')
	}
	o.withheld = append(o.withheld, `{"index":`...)
	o.withheld = strconv.AppendInt(o.withheld, int64(i), 10)
	o.withheld = append(o.withheld, `,"type":"`...)
	o.withheld = guestjson.AppendStringValue(o.withheld, typ)
	o.withheld = append(o.withheld, `"}`...)
	return dst, nil
}

// appendNamespace appends the function and custom tools of a namespace.
func (o *toolOptions) appendNamespace(dst []byte, t value, where string) ([]byte, error) {
	name, desc, inner := t.Get("name"), t.Get("description"), t.Get("tools")
	if !name.IsString() || !validSchemaName(name.Str()) {
		return dst, invalid(where+".name", where+".name is required: 1 to 64 letters, digits, underscores or dashes")
	}
	if !desc.IsNull() && !desc.IsString() {
		return dst, invalid(where+".description", where+".description must be a string")
	}
	if !inner.IsArray() {
		return dst, invalid(where+".tools", where+".tools must be an array of function or custom tools")
	}
	// The head is JSON-escaped text: the name needs no escaping (checked).
	head := append([]byte(name.Str()+": "), guestjson.AppendStringValue(nil, desc)...)
	head = append(head, `\n\n`...)
	var err error
	j := 0
	inner.Elements(func(it value) bool {
		w := indexed(where+".tools", j)
		j++
		if it.Get("type").Is("custom") {
			dst, err = o.appendCustom(dst, it, w, name.Str(), string(head))
		} else {
			dst, err = o.appendFunction(dst, it, w, false, name.Str(), string(head))
		}
		return err == nil
	})
	if err == nil && j == 0 {
		err = invalid(where+".tools", where+".tools must hold at least one tool")
	}
	return dst, err
}

// appendCustom appends a custom tool as a function of one string argument.
func (o *toolOptions) appendCustom(dst []byte, t value, where, ns, nsDesc string) ([]byte, error) {
	name, desc, format := t.Get("name"), t.Get("description"), t.Get("format")
	n := name.Str()
	if !name.IsString() || !validSchemaName(n) {
		return dst, invalid(where+".name", where+".name is required: 1 to 64 letters, digits, underscores or dashes")
	}
	if !desc.IsNull() && !desc.IsString() {
		return dst, invalid(where+".description", where+".description must be a string")
	}
	grammar, err := customGrammar(format, where+".format")
	if err != nil {
		return dst, err
	}
	qualified := ns != "" && o.shared(n)
	if qualified {
		if n = qualify(ns, n); !validSchemaName(n) {
			return dst, invalid(where+".name", where+".name with its namespace ("+n+") is longer than 64 characters, and it must be qualified: another tool has its name")
		}
	}
	if err := o.add(n, where); err != nil {
		return dst, err
	}
	if len(o.names) > 1 {
		dst = append(dst, ',')
	}
	dst = append(dst, `{"name":"`...)
	dst = append(dst, n...)
	dst = append(dst, '"')
	if desc.IsString() || nsDesc != "" {
		dst = append(dst, `,"description":"`...)
		dst = append(dst, nsDesc...)
		dst = guestjson.AppendStringValue(dst, desc)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"parameters":{"type":"object","properties":{"input":{"type":"string","description":"`...)
	dst = append(dst, `The tool's free-form input.`...)
	dst = append(dst, grammar...)
	dst = append(dst, `"}},"required":["input"],"additionalProperties":false},"custom":true`...)
	if qualified {
		dst = append(dst, `,"qualified":true`...)
	}
	return appendNamespace(dst, ns), nil
}

// qualify is the native name of function name offered in namespace ns when
// another tool has its name (native.Tool.Qualified).
func qualify(ns, name string) string { return ns + nativewire.NamespaceSeparator + name }

// shared reports whether name is offered more than once, counting the
// functions of namespaces: a namespaced function of that name is then
// qualified so that the model can tell the two apart.
func (o *toolOptions) shared(name string) bool { return countName(o.all, name) > 1 }

func countName(names []string, name string) int {
	c := 0
	for _, n := range names {
		if n == name {
			c++
		}
	}
	return c
}

// offeredNames lists the names of the function and custom tools of a
// responses tools array, those inside namespaces included; nil when there
// is no namespace (nothing is then qualified).
func offeredNames(tools value) []string {
	var names []string
	ns := false
	tools.Elements(func(t value) bool {
		typ := t.Get("type")
		switch {
		case typ.Is("function"), typ.Is("custom"):
			names = append(names, t.Get("name").Str())
		case typ.Is("namespace"):
			ns = true
			t.Get("tools").Elements(func(it value) bool {
				names = append(names, it.Get("name").Str())
				return true
			})
		}
		return true
	})
	if !ns {
		return nil
	}
	return names
}

// appendNamespace closes a native tool, naming the namespace it was offered
// in (ns needs no escaping: checked by validSchemaName).
func appendNamespace(dst []byte, ns string) []byte {
	if ns != "" {
		dst = append(dst, `,"namespace":"`...)
		dst = append(dst, ns...)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

// customGrammar checks a custom tool's format and returns the JSON-escaped
// sentence that tells the model the grammar ("" for free text).
func customGrammar(f value, where string) ([]byte, error) {
	switch {
	case f.IsNull(), f.IsObject() && f.Get("type").Is("text"):
		return nil, nil
	case !f.IsObject() || !f.Get("type").Is("grammar"):
		return nil, invalid(where, where+` must be {"type":"text"} or {"type":"grammar","syntax","definition"}`)
	}
	syntax, def := f.Get("syntax"), f.Get("definition")
	if !syntax.Is("lark") && !syntax.Is("regex") {
		return nil, invalid(where+".syntax", where+".syntax must be lark or regex")
	}
	if !def.IsString() {
		return nil, invalid(where+".definition", where+".definition must be a string")
	}
	b := append([]byte(` It must match this `), syntax.Str()...)
	b = append(b, ` grammar:\n`...)
	return guestjson.AppendStringValue(b, def), nil
}

// hostedChoice reports whether a tool_choice type names a hosted tool
// (web_search_preview, file_search, mcp, shell …), as opposed to a function,
// a custom tool or allowed_tools.
func hostedChoice(typ value) bool {
	return typ.IsString() && !typ.Is("allowed_tools") && !typ.Is("function") && !typ.Is("custom")
}
