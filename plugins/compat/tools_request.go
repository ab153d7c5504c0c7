package compat

import "github.com/runedge/runedge/plugins/guestjson"

// Function tools in requests. Both endpoints offer tools and choose among
// them in the same way, differing only in where a function's fields sit
// (chat: tools[i].function.name; responses: tools[i].name), so one reader
// serves both and writes the native form:
//
//	"tools":[{"name","description","parameters","strict"}…],
//	"tool_choice":"none"|"required"|{"name":"…"},   (left out for auto)
//	"parallel_tool_calls":true|false                 (left out when not sent)
//
// On chat, anything but a function tool is refused with unsupported_parameter
// naming tools[i].type. On responses, namespace and custom tools become
// function tools and hosted tools are withheld (tools_kinds.go).

// CodeUnsupportedParameter is the OpenAI error code for a parameter that
// would change the answer but is not supported.
const CodeUnsupportedParameter = "unsupported_parameter"

func unsupported(param, message string) error {
	return &InputError{Message: message, Param: param, Code: CodeUnsupportedParameter}
}

// toolOptions is what a request says about tools, in native form.
type toolOptions struct {
	tools    []byte // the native tools array, or nil
	names    []string
	choice   string // native tool_choice JSON, "" for auto
	parallel value  // the client's parallel_tool_calls, when a boolean
	// withheld are the hosted tools not offered to the model, in
	// native form: {"index":i,"type":"…"}, comma-separated.
	withheld []byte
	// all are the names of every function and custom tool offered, those
	// in namespaces included (only when there is a namespace): a
	// namespaced one whose name is among them twice is qualified.
	all []string
}

// readTools reads tools, tool_choice and parallel_tool_calls. chat selects
// the chat shapes.
func readTools(tools, choice, parallel value, chat bool) (toolOptions, error) {
	var o toolOptions
	if !tools.IsNull() && !tools.IsArray() {
		return o, invalid("tools", "tools must be an array of tool objects")
	}
	if tools.IsArray() {
		if !chat {
			o.all = offeredNames(tools)
		}
		var err error
		i := 0
		b := make([]byte, 0, len(tools)+16)
		b = append(b, '[')
		tools.Elements(func(t value) bool {
			if chat {
				b, err = o.appendFunction(b, t, indexed("tools", i), true, "", "")
			} else {
				b, err = o.appendResponsesTool(b, t, i)
			}
			i++
			return err == nil
		})
		if err != nil {
			return o, err
		}
		if len(o.names) > 0 {
			o.tools = append(b, ']')
		}
	}
	if _, err := optBool(parallel, "parallel_tool_calls"); err != nil {
		return o, err
	}
	if !parallel.IsNull() {
		o.parallel = parallel
	}
	var err error
	o.choice, err = readToolChoice(choice, o.names, chat)
	return o, err
}

// appendFunction appends function tool t (tools[i], or a namespace's
// tools[i].tools[j], as where names it) in native form and records its
// name. On chat the function's fields sit in its function member; ns and nsDesc, when set, heads the description: the model sees the namespace's
// purpose with each of its functions.
func (o *toolOptions) appendFunction(dst []byte, t value, where string, chat bool, ns, nsDesc string) ([]byte, error) {
	if !t.IsObject() {
		return dst, invalid(where, "each tool must be an object with a type")
	}
	typ := t.Get("type")
	if !typ.Is("function") {
		return dst, unsupported(where+".type",
			"only function tools are supported here: built-in tools (web_search, file_search, code_interpreter, computer_use, mcp, image_generation, local_shell …) and custom tools are not")
	}
	fn := t
	if chat {
		where += ".function"
		fn = t.Get("function")
		if !fn.IsObject() {
			return dst, invalid(where, where+" must be an object with a name")
		}
	}
	if len(o.names) > 0 {
		dst = append(dst, ',')
	}
	dst, name, err := appendTool(dst, fn, where, ns, nsDesc, o.shared)
	if err == nil {
		err = o.add(name, where)
	}
	return dst, err
}

// add records an offered native name; two tools of one name (a namespace's
// function and a top-level one, say) could not be told apart in a call.
func (o *toolOptions) add(name, where string) error {
	for _, n := range o.names {
		if n == name {
			return invalid(where+".name", where+".name "+name+" is offered twice: tool names must be unique, namespaced ones included")
		}
	}
	o.names = append(o.names, name)
	return nil
}

// appendTool appends the function fn in native form and returns its native
// name; ns is the namespace it was offered in, if any, and a namespaced
// function whose name is shared is qualified by it.
func appendTool(dst []byte, fn value, where, ns, nsDesc string, shared func(string) bool) ([]byte, string, error) {
	var name, desc, params, strict value
	fn.Members(func(k, v value) bool {
		switch {
		case k.Is("name"):
			name = v
		case k.Is("description"):
			desc = v
		case k.Is("parameters"):
			params = v
		case k.Is("strict"):
			strict = v
		}
		return true
	})
	n := name.Str()
	if !name.IsString() || !validSchemaName(n) {
		return dst, "", invalid(where+".name", where+".name is required: 1 to 64 letters, digits, underscores or dashes")
	}
	if !desc.IsNull() && !desc.IsString() {
		return dst, "", invalid(where+".description", where+".description must be a string")
	}
	if !params.IsNull() && !params.IsObject() {
		return dst, "", invalid(where+".parameters", where+".parameters must be a JSON Schema object")
	}
	s, err := optBool(strict, where+".strict")
	if err != nil {
		return dst, "", err
	}
	qualified := ns != "" && shared != nil && shared(n)
	if qualified {
		if n = qualify(ns, n); !validSchemaName(n) {
			return dst, "", invalid(where+".name", where+".name with its namespace ("+n+") is longer than 64 characters, and it must be qualified: another tool has its name")
		}
	}
	dst = append(dst, `{"name":"`...)
	dst = append(dst, n...) // checked: needs no escaping
	dst = append(dst, '"')
	if desc.IsString() || nsDesc != "" {
		dst = append(dst, `,"description":"`...)
		dst = append(dst, nsDesc...) // escaped by the caller
		dst = guestjson.AppendStringValue(dst, desc)
		dst = append(dst, '"')
	}
	if params.IsObject() {
		dst = append(dst, `,"parameters":`...)
		dst = guestjson.AppendCompact(dst, string(params))
	}
	if s {
		dst = append(dst, `,"strict":true`...)
	}
	if qualified {
		dst = append(dst, `,"qualified":true`...)
	}
	return appendNamespace(dst, ns), n, nil
}

// readToolChoice returns the native tool_choice ("" for auto). A named
// function must be one of the tools offered, and required or a named
// function needs tools at all.
func readToolChoice(c value, names []string, chat bool) (string, error) {
	switch {
	case c.IsNull(), c.Is("auto"):
		return "", nil
	case c.Is("none"):
		return `"none"`, nil
	case c.Is("required"):
		if len(names) == 0 {
			return "", invalid("tool_choice", "tool_choice required needs tools")
		}
		return `"required"`, nil
	case !c.IsObject():
		return "", invalid("tool_choice", `tool_choice must be "auto", "none", "required" or a function to call`)
	}
	if typ := c.Get("type"); !typ.Is("function") && (chat || !typ.Is("custom")) {
		if !chat && hostedChoice(typ) {
			return "", unsupported("tool_choice", "tool_choice forces the hosted tool "+typ.Str()+", which this service cannot run")
		}
		return "", unsupported("tool_choice", "tool_choice can only name a function or custom tool: allowed_tools and built-in tools are not supported")
	}
	name, param := c.Get("name"), "tool_choice.name"
	if chat {
		name, param = c.Get("function").Get("name"), "tool_choice.function.name"
	}
	n := name.Str()
	if !name.IsString() || !validSchemaName(n) {
		return "", invalid(param, param+" is required: the name of a function in tools")
	}
	for _, offered := range names {
		if offered == n {
			return `{"name":"` + n + `"}`, nil
		}
	}
	return "", invalid(param, param+" names a function that is not in tools")
}

// appendToolOptions appends the native tool fields.
func (o *toolOptions) appendTo(dst []byte) []byte {
	if o.tools != nil {
		dst = append(dst, `,"tools":`...)
		dst = append(dst, o.tools...)
	}
	if o.choice != "" {
		dst = append(dst, `,"tool_choice":`...)
		dst = append(dst, o.choice...)
	}
	if o.parallel != "" {
		dst = append(dst, `,"parallel_tool_calls":`...)
		dst = append(dst, o.parallel...)
	}
	if o.withheld != nil {
		dst = append(dst, `,"withheld_tools":[`...)
		dst = append(dst, o.withheld...)
		dst = append(dst, ']')
	}
	return dst
}

// appendNativeCall appends one native tool call {"id","name","arguments"}.
// where names the client's call for errors; idParam and the rest name its
// fields as the endpoint spells them.
func appendNativeCall(dst []byte, id, name, args value, idParam, nameParam, argsParam string) ([]byte, error) {
	if !id.IsString() || id == `""` {
		return dst, invalid(idParam, idParam+" must be a non-empty string")
	}
	if !name.IsString() || name == `""` {
		return dst, invalid(nameParam, nameParam+" must be a non-empty string")
	}
	if !args.IsString() {
		return dst, invalid(argsParam, argsParam+" must be a string (the arguments as JSON text)")
	}
	dst = append(dst, `{"id":"`...)
	dst = guestjson.AppendStringValue(dst, id)
	dst = append(dst, `","name":"`...)
	dst = guestjson.AppendStringValue(dst, name)
	dst = append(dst, `","arguments":"`...)
	dst = guestjson.AppendStringValue(dst, args)
	return append(dst, `"}`...), nil
}
