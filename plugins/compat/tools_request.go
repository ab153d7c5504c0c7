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
// Anything but a function tool (web_search, file_search, code_interpreter,
// computer_use, mcp, image_generation, local_shell, custom tools …) is
// refused with unsupported_parameter naming tools[i].type: runedge cannot run
// them, and ignoring them would answer a different question than was asked.

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
}

// readTools reads tools, tool_choice and parallel_tool_calls. chat selects
// the chat shapes.
func readTools(tools, choice, parallel value, chat bool) (toolOptions, error) {
	var o toolOptions
	if !tools.IsNull() && !tools.IsArray() {
		return o, invalid("tools", "tools must be an array of tool objects")
	}
	if tools.IsArray() {
		var err error
		i := 0
		b := make([]byte, 0, len(tools)+16)
		b = append(b, '[')
		tools.Elements(func(t value) bool {
			if i > 0 {
				b = append(b, ',')
			}
			var name string
			b, name, err = appendTool(b, t, i, chat)
			o.names = append(o.names, name)
			i++
			return err == nil
		})
		if err != nil {
			return o, err
		}
		if i > 0 {
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

// appendTool appends tool i in native form and returns its name.
func appendTool(dst []byte, t value, i int, chat bool) ([]byte, string, error) {
	if !t.IsObject() {
		return dst, "", invalid(indexed("tools", i), "each tool must be an object with a type")
	}
	typ := t.Get("type")
	if !typ.Is("function") {
		return dst, "", unsupported(indexed("tools", i)+".type",
			"only function tools are supported: built-in tools (web_search, file_search, code_interpreter, computer_use, mcp, image_generation, local_shell …) and custom tools are not")
	}
	fn, where := t, indexed("tools", i)
	if chat {
		where += ".function"
		fn = t.Get("function")
		if !fn.IsObject() {
			return dst, "", invalid(where, where+" must be an object with a name")
		}
	}
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
	dst = append(dst, `{"name":"`...)
	dst = append(dst, n...) // checked: needs no escaping
	dst = append(dst, '"')
	if desc.IsString() {
		dst = append(dst, `,"description":"`...)
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
	return append(dst, '}'), n, nil
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
	if !c.Get("type").Is("function") {
		return "", unsupported("tool_choice", "tool_choice can only name a function tool: allowed_tools, built-in and custom tools are not supported")
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
