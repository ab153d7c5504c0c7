package apierr

import "encoding/json"

// wireError is the OpenAI error object; Param is a pointer so that an empty
// param renders as null while all four keys stay present.
type wireError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

func (e *Error) wire() wireError {
	w := wireError{Message: e.Message, Type: e.Type, Code: e.Code}
	if e.Param != "" {
		w.Param = &e.Param
	}
	return w
}

// Body returns the OpenAI error body {"error":{"message","type","param","code"}}.
func (e *Error) Body() []byte {
	b, _ := json.Marshal(struct {
		Error wireError `json:"error"`
	}{e.wire()}) // cannot fail: strings only
	return b
}

// Object returns the bare error object {"message","type","param","code"}.
func (e *Error) Object() []byte {
	b, _ := json.Marshal(e.wire()) // cannot fail: strings only
	return b
}
