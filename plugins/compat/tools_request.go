package compat

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
	if !tools.isNull() && !tools.isArray() {
		return o, invalid("tools", "tools must be an array of tool objects")
	}
	if tools.isArray() {
		var err error
		i := 0
		b := make([]byte, 0, len(tools)+16)
		b = append(b, '[')
		tools.elements(func(t value) bool {
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
	if !parallel.isNull() {
		o.parallel = parallel
	}
	var err error
	o.choice, err = readToolChoice(choice, o.names, chat)
	return o, err
}

// appendTool appends tool i in native form and returns its name.
func appendTool(dst []byte, t value, i int, chat bool) ([]byte, string, error) {
	if !t.isObject() {
		return dst, "", invalid(indexed("tools", i), "each tool must be an object with a type")
	}
	typ := t.get("type")
	if !typ.is("function") {
		return dst, "", unsupported(indexed("tools", i)+".type",
			"only function tools are supported: built-in tools (web_search, file_search, code_interpreter, computer_use, mcp, image_generation, local_shell …) and custom tools are not")
	}
	fn, where := t, indexed("tools", i)
	if chat {
		where += ".function"
		fn = t.get("function")
		if !fn.isObject() {
			return dst, "", invalid(where, where+" must be an object with a name")
		}
	}
	var name, desc, params, strict value
	fn.members(func(k, v value) bool {
		switch {
		case k.is("name"):
			name = v
		case k.is("description"):
			desc = v
		case k.is("parameters"):
			params = v
		case k.is("strict"):
			strict = v
		}
		return true
	})
	n := name.str()
	if !name.isString() || !validSchemaName(n) {
		return dst, "", invalid(where+".name", where+".name is required: 1 to 64 letters, digits, underscores or dashes")
	}
	if !desc.isNull() && !desc.isString() {
		return dst, "", invalid(where+".description", where+".description must be a string")
	}
	if !params.isNull() && !params.isObject() {
		return dst, "", invalid(where+".parameters", where+".parameters must be a JSON Schema object")
	}
	s, err := optBool(strict, where+".strict")
	if err != nil {
		return dst, "", err
	}
	dst = append(dst, `{"name":"`...)
	dst = append(dst, n...) // checked: needs no escaping
	dst = append(dst, '"')
	if desc.isString() {
		dst = append(dst, `,"description":"`...)
		dst = appendStringValue(dst, desc)
		dst = append(dst, '"')
	}
	if params.isObject() {
		dst = append(dst, `,"parameters":`...)
		dst = appendCompact(dst, string(params))
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
	case c.isNull(), c.is("auto"):
		return "", nil
	case c.is("none"):
		return `"none"`, nil
	case c.is("required"):
		if len(names) == 0 {
			return "", invalid("tool_choice", "tool_choice required needs tools")
		}
		return `"required"`, nil
	case !c.isObject():
		return "", invalid("tool_choice", `tool_choice must be "auto", "none", "required" or a function to call`)
	}
	if !c.get("type").is("function") {
		return "", unsupported("tool_choice", "tool_choice can only name a function tool: allowed_tools, built-in and custom tools are not supported")
	}
	name, param := c.get("name"), "tool_choice.name"
	if chat {
		name, param = c.get("function").get("name"), "tool_choice.function.name"
	}
	n := name.str()
	if !name.isString() || !validSchemaName(n) {
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
	if !id.isString() || id == `""` {
		return dst, invalid(idParam, idParam+" must be a non-empty string")
	}
	if !name.isString() || name == `""` {
		return dst, invalid(nameParam, nameParam+" must be a non-empty string")
	}
	if !args.isString() {
		return dst, invalid(argsParam, argsParam+" must be a string (the arguments as JSON text)")
	}
	dst = append(dst, `{"id":"`...)
	dst = appendStringValue(dst, id)
	dst = append(dst, `","name":"`...)
	dst = appendStringValue(dst, name)
	dst = append(dst, `","arguments":"`...)
	dst = appendStringValue(dst, args)
	return append(dst, `"}`...), nil
}
