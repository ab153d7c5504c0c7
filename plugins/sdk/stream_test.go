package sdk

import (
	"errors"
	"testing"
)

func TestMapStreamFunc(t *testing.T) {
	var seen StreamInput
	hook := MapStreamFunc(func(in StreamInput) (StreamOutput, error) {
		seen = in
		if in.Text == "fail" {
			return StreamOutput{}, errors.New("broken")
		}
		return StreamOutput{Emit: "<" + in.Text[:1], Hold: in.Text[1:]}, nil
	})
	out, err := hook([]byte(`{"endpoint":"responses","id":"r","tenant_id":"t","text":"abc","final":false}`))
	if err != nil || string(out) != `{"emit":"<a","hold":"bc"}` {
		t.Errorf("hook = %s, %v", out, err)
	}
	if seen != (StreamInput{Endpoint: "responses", ID: "r", TenantID: "t", Text: "abc"}) {
		t.Errorf("fn saw %+v", seen)
	}
	// On the final call, what fn still holds is emitted.
	if out, err := hook([]byte(`{"text":"xyz","final":true}`)); err != nil || string(out) != `{"emit":"<xyz","hold":""}` {
		t.Errorf("final: hook = %s, %v", out, err)
	}
	if _, err := hook([]byte(`{"text":"fail"}`)); err == nil || err.Error() != "broken" {
		t.Errorf("failing fn: error = %v", err)
	}
	if _, err := hook([]byte(`not json`)); err == nil {
		t.Error("malformed input: no error")
	}
}
