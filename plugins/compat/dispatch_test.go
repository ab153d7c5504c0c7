package compat

import (
	"errors"
	"testing"
)

// Faults in what the host builds are plain errors (the host answers 500),
// never InputError (which would blame the client with a 400).
func TestHostFaultsArePlainErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		hook func([]byte) ([]byte, error)
		in   string
	}{
		{"request for an unknown endpoint", MapRequest, `{"endpoint":"embeddings","body":{"model":"service"}}`},
		{"request without endpoint", MapRequest, `{"body":{"model":"service"}}`},
		{"result for an unknown endpoint", MapResult, `{"endpoint":"completions","id":"x","created":1,"model":"service"}`},
		{"result without id", MapResult, `{"endpoint":"chat.completions","created":1,"model":"service","status":"completed"}`},
		{"result without model", MapResult, `{"endpoint":"responses","id":"r","created":1,"status":"completed","message_id":"m"}`},
		{"result without created", MapResult, `{"endpoint":"chat.completions","id":"c","model":"service"}`},
		{"response with unknown status", MapResult, `{"endpoint":"responses","id":"r","message_id":"m","created":1,"model":"service","status":"bogus"}`},
		{"completed response without message id", MapResult, `{"endpoint":"responses","id":"r","created":1,"model":"service","status":"completed"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.hook([]byte(c.in))
			var ie *InputError
			if err == nil || errors.As(err, &ie) {
				t.Errorf("want a plain error, got %v (output %s)", err, out)
			}
		})
	}
}

func TestForEndpoint(t *testing.T) {
	hook := ForEndpoint(EndpointChat, MapRequest)
	if _, err := hook(envelope(EndpointChat, `{"model":"service","messages":[{"role":"user","content":"x"}]}`)); err != nil {
		t.Errorf("own endpoint refused: %v", err)
	}
	_, err := hook(envelope(EndpointResponses, `{"model":"service","input":"x"}`))
	var ie *InputError
	if err == nil || errors.As(err, &ie) {
		t.Errorf("other endpoint: want a plain error, got %v", err)
	}
}

func TestInputErrorText(t *testing.T) {
	err := invalid("messages[0].role", "role must be one of system, developer, user, assistant or tool")
	if got := err.Error(); got != "role must be one of system, developer, user, assistant or tool (param messages[0].role)" {
		t.Errorf("Error() = %q", got)
	}
}

func TestSelfTest(t *testing.T) {
	if err := SelfTest(); err != nil {
		t.Fatal(err)
	}
}
