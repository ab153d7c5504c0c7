package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestHookBits(t *testing.T) {
	defer Register(Hooks{})
	echo := func(in []byte) ([]byte, error) { return in, nil }
	tests := []struct {
		hooks Hooks
		want  int32
	}{
		{Hooks{}, 0},
		{Hooks{MapRequest: echo}, 1},
		{Hooks{MapResult: echo}, 2},
		{Hooks{MapRequest: echo, MapResult: echo, SelfTest: func() error { return nil }}, 7},
		{Hooks{MapStream: echo}, 8},
		{Hooks{MapResult: echo, MapStream: echo, Version: "1.0.0"}, 10},
	}
	for _, tt := range tests {
		Register(tt.hooks)
		if got := hookBits(); got != tt.want {
			t.Errorf("hookBits() = %d, want %d", got, tt.want)
		}
	}
}

// inputErrorBody is the status-1 output as the host decodes it.
type inputErrorBody struct {
	Error struct {
		Message string `json:"message"`
		Param   string `json:"param"`
		Code    string `json:"code"`
	} `json:"error"`
}

func TestCallMapStatuses(t *testing.T) {
	tests := []struct {
		name   string
		fn     func([]byte) ([]byte, error)
		status int32
		out    string
	}{
		{"ok", func(in []byte) ([]byte, error) { return append([]byte("got "), in...), nil }, statusOK, "got in"},
		{"internal error", func([]byte) ([]byte, error) { return []byte("ignored"), errors.New("broken") }, statusInternal, "broken"},
		{"panic", func([]byte) ([]byte, error) { panic("boom") }, statusInternal, "panic: boom"},
		{"nil hook", nil, statusInternal, "hook not registered"},
		{"invalid input", func([]byte) ([]byte, error) {
			return nil, InvalidInput("bad", "model", "model_not_found")
		}, statusInvalid, `{"error":{"message":"bad","param":"model","code":"model_not_found"}}`},
		{"wrapped invalid input", func([]byte) ([]byte, error) {
			return nil, fmt.Errorf("mapping: %w", InvalidInput("bad", "", ""))
		}, statusInvalid, `{"error":{"message":"bad"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := callMap(tt.fn, []byte("in"))
			if status != tt.status || string(out) != tt.out {
				t.Errorf("callMap = %d, %q; want %d, %q", status, out, tt.status, tt.out)
			}
		})
	}
}

func TestCallSelfTest(t *testing.T) {
	if status, out := callSelfTest(func() error { return nil }); status != statusOK || len(out) != 0 {
		t.Errorf("passing self test = %d, %q; want 0, empty", status, out)
	}
	if status, out := callSelfTest(func() error { return errors.New("golden mismatch") }); status != statusInternal || string(out) != "golden mismatch" {
		t.Errorf("failing self test = %d, %q; want 2, %q", status, out, "golden mismatch")
	}
	if status, out := callSelfTest(func() error { panic(errors.New("nil map")) }); status != statusInternal || string(out) != "panic: nil map" {
		t.Errorf("panicking self test = %d, %q; want 2, %q", status, out, "panic: nil map")
	}
}

// TestInvalidInputBodyIsJSON checks that any message survives the trip
// through the hand-written JSON encoder.
func TestInvalidInputBodyIsJSON(t *testing.T) {
	for _, msg := range []string{
		`quote " backslash \ slash /`,
		"controls \x00\x01\x1f\t\r\n end",
		"unicode é 漢字 🙂",
		"\u2028 line separator",
	} {
		body := invalidInputBody(msg, "p\"aram", "c\node")
		var got inputErrorBody
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("body %s is not JSON: %v", body, err)
		}
		if got.Error.Message != msg || got.Error.Param != "p\"aram" || got.Error.Code != "c\node" {
			t.Errorf("round trip of %q gave %+v", msg, got.Error)
		}
	}
	body := invalidInputBody("bad \xff byte", "", "")
	var got inputErrorBody
	if err := json.Unmarshal(body, &got); err != nil || got.Error.Message != "bad \ufffd byte" {
		t.Errorf("invalid UTF-8: body %s, decoded %q, %v; want the byte replaced by U+FFFD", body, got.Error.Message, err)
	}
}

func TestInvalidInputError(t *testing.T) {
	err := InvalidInput("model is required", "model", "")
	if err.Error() != "model is required" {
		t.Errorf("Error() = %q", err.Error())
	}
	if _, ok := asInvalidInput(fmt.Errorf("outer: %w", err)); !ok {
		t.Error("a wrapped InvalidInput error is not recognised")
	}
	if _, ok := asInvalidInput(errors.New("other")); ok {
		t.Error("a plain error is taken for an InvalidInput error")
	}
}
