package native

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Function tools. The client offers tools in the request (Request.Tools), the
// model answers with calls (Result.ToolCalls, Event.ToolCall while
// streaming), and the next request carries the calls back as an assistant
// message (Message.ToolCalls) followed by one tool message per result
// (Message.ToolCallID). The JSON tags below are part of the plugin ABI.

// Tool is a function the client offers the model.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments (an object schema);
	// empty means the function takes no arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Strict asks for arguments that match Parameters exactly.
	Strict bool `json:"strict,omitempty"`
	// Namespace and Custom say how a Responses client offered the tool: a
	// function inside that namespace, or a custom tool (free-form input,
	// offered as a function of one string argument, input). The model sees
	// only the function; the host frames streamed calls in the client's
	// shape with them.
	Namespace string `json:"namespace,omitempty"`
	Custom    bool   `json:"custom,omitempty"`
	// Qualified marks a namespaced function offered as Namespace + "__" +
	// its name, because another tool of the request (top-level, or in
	// another namespace) has its name: the model must tell them apart.
	// The client's name is Name without that prefix (FunctionName).
	Qualified bool `json:"qualified,omitempty"`
}

// NamespaceSeparator joins a namespace and a function's name in a
// qualified tool name (Tool.Qualified).
const NamespaceSeparator = "__"

// FunctionName is the name the client gave the tool: Name, less the
// namespace prefix of a qualified tool.
func (t Tool) FunctionName() string {
	if t.Qualified && len(t.Name) > len(t.Namespace)+len(NamespaceSeparator) {
		return t.Name[len(t.Namespace)+len(NamespaceSeparator):]
	}
	return t.Name
}

// ToolCall is one call of a function tool, by the model.
type ToolCall struct {
	// ID pairs the call with its result (Message.ToolCallID); chat calls it
	// id, the Responses API call_id.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON document (normally an object), as text; for a
	// custom tool's call, the free-form input itself.
	Arguments string `json:"arguments"`
	// Custom marks a custom tool's call (Responses custom_tool_call):
	// its input is Arguments, unparsed.
	Custom bool `json:"custom,omitempty"`
}

// ToolCallDelta is one streamed fragment of a tool call. Index numbers the
// calls of one answer from 0; the first fragment of a call carries its ID and
// Name, every fragment may carry a piece of Arguments. Concatenating the
// pieces of one index gives ToolCall.Arguments.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Tool choice modes.
const (
	ToolChoiceAuto     = "auto"     // the model decides (the default)
	ToolChoiceNone     = "none"     // the model must answer with text
	ToolChoiceRequired = "required" // the model must call at least one tool
	ToolChoiceFunction = "function" // the model must call ToolChoice.Name
)

// ToolChoice says whether, and which, tool the model must call. Its JSON
// form is "auto", "none", "required", or {"name":"fn"} for one function; the
// zero value means auto.
type ToolChoice struct {
	Mode string
	Name string // with Mode ToolChoiceFunction
}

// IsZero reports an unset choice (auto), for omitzero.
func (c ToolChoice) IsZero() bool { return c.Mode == "" && c.Name == "" }

// MarshalJSON writes the string or {"name"} form.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	if c.Mode == ToolChoiceFunction || (c.Mode == "" && c.Name != "") {
		return json.Marshal(struct {
			Name string `json:"name"`
		}{c.Name})
	}
	if c.Mode == "" {
		return []byte(`"auto"`), nil
	}
	return json.Marshal(c.Mode)
}

var errToolChoice = errors.New(`tool_choice must be "auto", "none", "required" or {"name":"..."}`)

// UnmarshalJSON reads the string or {"name"} form.
func (c *ToolChoice) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var obj struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(b, &obj); err != nil || obj.Name == "" {
			return errToolChoice
		}
		*c = ToolChoice{Mode: ToolChoiceFunction, Name: obj.Name}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errToolChoice
	}
	switch s {
	case ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
		*c = ToolChoice{Mode: s}
		return nil
	}
	return errToolChoice
}

// WithheldTool is a hosted tool the client offered and the model was not:
// its index in the client's tools and its type.
type WithheldTool struct {
	Index int    `json:"index"`
	Type  string `json:"type"`
}
