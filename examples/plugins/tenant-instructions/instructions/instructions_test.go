package instructions

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/tidwall/gjson"
)

var testTable = Table{
	Default: "Be helpful.",
	Tenants: map[string]string{"acme": "Speak for ACME.", "quote\"d": "Line one\nline \"two\"."},
}

// request is a map_request input.
func request(endpoint, tenant, body string) []byte {
	in := append([]byte(`{"endpoint":"`+endpoint+`","tenant_id":`), guestjson.AppendString(nil, tenant)...)
	return append(in, `,"actor":{"id":"u1","type":"user","name":"U"},"body":`+body+`}`...)
}

const (
	chatBody      = `{"model":"service","messages":[{"role":"system","content":"Client rules."},{"role":"user","content":"Hi"}]}`
	responsesBody = `{"model":"service","input":"Hi","instructions":"Answer in French."}`
)

func TestMapRequest(t *testing.T) {
	for _, c := range []struct {
		name, endpoint, tenant, body string
		instructions                 string
	}{
		{"chat, listed tenant", compat.EndpointChat, "acme", chatBody, "Speak for ACME."},
		{"chat, unlisted tenant gets the default", compat.EndpointChat, "initech", chatBody, "Be helpful."},
		{"chat, no tenant gets the default", compat.EndpointChat, "", chatBody, "Be helpful."},
		{"escapes survive", compat.EndpointChat, "quote\"d", chatBody, "Line one\nline \"two\"."},
		{"responses, client instructions kept after", compat.EndpointResponses, "acme", responsesBody,
			"Speak for ACME.\n\nAnswer in French."},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := request(c.endpoint, c.tenant, c.body)
			got, err := testTable.MapRequest(in)
			if err != nil {
				t.Fatal(err)
			}
			if !gjson.ValidBytes(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
			if s := gjson.GetBytes(got, "request.instructions").String(); s != c.instructions {
				t.Errorf("instructions = %q, want %q", s, c.instructions)
			}
			// Everything but the instructions is the default mapping's.
			want, err := compat.MapRequest(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"request.input", "request.stream", "echo"} {
				if g, w := gjson.GetBytes(got, path).Raw, gjson.GetBytes(want, path).Raw; g != w {
					t.Errorf("%s = %s, want %s", path, g, w)
				}
			}
		})
	}
}

// The Responses reply repeats the client's instructions from the echo; the
// tenant's must not leak into it.
func TestMapRequestKeepsEcho(t *testing.T) {
	got, err := testTable.MapRequest(request(compat.EndpointResponses, "acme", responsesBody))
	if err != nil {
		t.Fatal(err)
	}
	if s := gjson.GetBytes(got, "echo.instructions").String(); s != "Answer in French." {
		t.Errorf("echo.instructions = %q, want the client's", s)
	}
}

// With no instructions for the tenant the request is the default mapping's,
// byte for byte.
func TestMapRequestWithoutInstructions(t *testing.T) {
	in := request(compat.EndpointChat, "initech", chatBody)
	got, err := Table{Tenants: testTable.Tenants}.MapRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := compat.MapRequest(in)
	if !bytes.Equal(got, want) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// A client's mistake stays a client error, so the plugin answers 400.
func TestMapRequestClientError(t *testing.T) {
	_, err := testTable.MapRequest(request(compat.EndpointChat, "acme", `{"model":"service"}`))
	var ie *compat.InputError
	if !errors.As(err, &ie) || ie.Param != "messages" {
		t.Errorf("want an InputError on messages, got %v", err)
	}
}

func TestParse(t *testing.T) {
	got, err := Parse([]byte(`{"default":"d","tenants":{"a":"A","b\u0021":"B"}}`))
	if err != nil || got.Default != "d" || got.Tenants["a"] != "A" || got.Tenants["b!"] != "B" || len(got.Tenants) != 2 {
		t.Errorf("Parse = %+v, %v", got, err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"tenants":{"a":"A"},}`, "not valid JSON"},
		{`["a"]`, "want an object"},
		{`{"default":3}`, `"default" must be a string`},
		{`{"tenants":[]}`, `"tenants" must be an object`},
		{`{"tenants":{"":"A"}}`, "empty tenant id"},
		{`{"tenants":{"a":""}}`, `tenant "a": instructions must be a non-empty string`},
		{`{"tenants":{"a":1}}`, `tenant "a": instructions must be a non-empty string`},
		{`{"tenants":{"a":"A","a":"B"}}`, `tenant "a" is listed twice`},
		{`{"tenant":{"a":"A"}}`, `unknown key "tenant"`},
	} {
		if _, err := Parse([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// The table shipped with the plugin must load: the plugin's self-test fails
// otherwise, and with it every swap to this build.
func TestEmbeddedTable(t *testing.T) {
	if tableErr != nil {
		t.Fatal(tableErr)
	}
	if len(table.Tenants) == 0 {
		t.Error("tenants.json lists no tenants")
	}
	if err := SelfTest(); err != nil {
		t.Error(err)
	}
}

// The self-test's check maps a listed and an unlisted tenant; with a default
// set both get instructions, so a mapping that dropped them would fail.
func TestCheck(t *testing.T) {
	if err := testTable.check(); err != nil {
		t.Fatal(err)
	}
	if err := (Table{}).check(); err != nil {
		t.Fatalf("empty table: %v", err)
	}
}
