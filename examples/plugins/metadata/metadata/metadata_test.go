package metadata

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/runedge/runedge/plugins/compat"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// result is a map_result input; echo is what the request mapping recorded.
func result(endpoint, echo string) []byte {
	return []byte(`{"endpoint":"` + endpoint + `","id":"id_1","message_id":"msg_1","created":1700000000,"model":"service",` +
		`"status":"completed","result":{"text":"Hello","finish_reason":"stop","usage":{"input_tokens":3,"output_tokens":1}},"echo":` + echo + `}`)
}

// The official Go SDK must read the added fields where clients look for
// them, with the rest of the reply intact.
func TestChatFingerprintReadBySDK(t *testing.T) {
	out, err := MapResult(result(compat.EndpointChat, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	var c openai.ChatCompletion
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	fp := c.SystemFingerprint //lint:ignore SA1019 deprecated upstream, but it is the field this plugin fills and clients read
	if fp != Fingerprint || !c.JSON.SystemFingerprint.Valid() {
		t.Errorf("system_fingerprint = %q, want %q", fp, Fingerprint)
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != "Hello" {
		t.Errorf("choices = %+v", c.Choices)
	}
}

func TestResponsesMetadataReadBySDK(t *testing.T) {
	for _, c := range []struct {
		name, echo string
		want       map[string]string
	}{
		{"no client metadata", `{}`, map[string]string{"mapped_by": "metadata-plugin", "plugin_version": Version}},
		{"null metadata", `{"metadata":null}`, map[string]string{"mapped_by": "metadata-plugin", "plugin_version": Version}},
		{"merged with the client's", `{"metadata":{"ticket":"T-1","mapped_by":"spoofed"}}`,
			map[string]string{"ticket": "T-1", "mapped_by": "metadata-plugin", "plugin_version": Version}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := MapResult(result(compat.EndpointResponses, c.echo))
			if err != nil {
				t.Fatal(err)
			}
			var r responses.Response
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatal(err)
			}
			// The service's own metadata.service is an object (its contract),
			// which openai-go's string-valued Metadata map cannot hold, so the
			// SDK's typed map is unusable and clients read metadata raw; the
			// plugin's keys must be there beside service.
			meta := gjson.Parse(r.JSON.Metadata.Raw())
			if !meta.Get("service").IsObject() {
				t.Errorf("metadata.service missing: %s", meta.Raw)
			}
			got := map[string]string{}
			meta.ForEach(func(k, v gjson.Result) bool {
				if k.Str != "service" {
					got[k.Str] = v.String()
				}
				return true
			})
			if len(got) != len(c.want) {
				t.Fatalf("metadata = %v (raw %s), want %v", got, meta.Raw, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("metadata[%q] = %q, want %q", k, got[k], v)
				}
			}
			if r.OutputText() != "Hello" || r.Status != responses.ResponseStatusCompleted {
				t.Errorf("output %q, status %q", r.OutputText(), r.Status)
			}
		})
	}
}

// Apart from the added fields the reply is the default mapping's.
func TestOnlyFieldsAdded(t *testing.T) {
	for endpoint, added := range map[string]string{
		compat.EndpointChat:      "system_fingerprint",
		compat.EndpointResponses: "metadata",
	} {
		in := result(endpoint, `{}`)
		got, err := MapResult(in)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := compat.MapResult(in)
		got, _ = sjson.DeleteBytes(got, added)
		want, _ = sjson.DeleteBytes(want, added)
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", endpoint, got, want)
		}
	}
}

func TestMapResultRefusesUnknownEndpoint(t *testing.T) {
	if _, err := MapResult(result("embeddings", `{}`)); err == nil {
		t.Error("want an error for an unknown endpoint")
	}
}

// A key with path characters is set as one key, not as a path.
func TestPathKey(t *testing.T) {
	out, err := sjson.SetBytes([]byte(`{"metadata":{}}`), "metadata."+pathKey("a.b*c?"), "v")
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "metadata").Map(); len(got) != 1 || got["a.b*c?"].Str != "v" {
		t.Errorf("got %s", out)
	}
}

func TestSelfTest(t *testing.T) {
	if err := SelfTest(); err != nil {
		t.Fatal(err)
	}
}
