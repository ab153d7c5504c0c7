//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/examples/plugins/redact/redact"
	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/plugins/runtime/runtimetest"
)

// load builds this plugin for wasip1 and loads it as the host does, which
// also runs its self-test.
func load(t *testing.T) *runtime.Plugin {
	t.Helper()
	return runtimetest.Load(t, ".")
}

const text = "Sure: mail jane.doe@example.com or call +1 (555) 123-4567, \"any\" time.\n"

func TestPlugin(t *testing.T) {
	p := load(t)
	ctx := context.Background()
	if !p.Has(runtime.MapResult) || !p.Has(runtime.MapStream) || p.Has(runtime.MapRequest) {
		t.Error("want hooks map_result and map_stream only")
	}
	if p.Version() != redact.Version {
		t.Errorf("version %q, want %q", p.Version(), redact.Version)
	}

	// map_result, for both endpoints, as the native code maps it.
	for _, endpoint := range []string{compat.EndpointChat, compat.EndpointResponses} {
		in := []byte(`{"endpoint":"` + endpoint + `","id":"id_1","message_id":"msg_1","created":1700000000,"model":"service",` +
			`"status":"completed","result":{"text":` + string(guestjson.AppendString(nil, text)) + `},"echo":{}}`)
		got, err := p.Call(ctx, runtime.MapResult, in)
		if err != nil {
			t.Fatalf("%s: %v", endpoint, err)
		}
		want, err := redact.MapResult(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || !strings.Contains(string(got), redact.EmailPlaceholder) {
			t.Errorf("%s:\nplugin %s\nnative %s", endpoint, got, want)
		}
	}

	// map_stream, with the text cut inside the address and the number.
	var streamed strings.Builder
	hold := ""
	pieces := []string{text[:15], text[15:30], text[30:48], text[48:]}
	for i, piece := range pieces {
		in := `{"endpoint":"responses","id":"resp_1","tenant_id":"t","text":` +
			string(guestjson.AppendString(nil, hold+piece)) + `,"final":` + strconv.FormatBool(i == len(pieces)-1) + `}`
		out, err := p.Call(ctx, runtime.MapStream, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		streamed.WriteString(gjson.GetBytes(out, "emit").Str)
		hold = gjson.GetBytes(out, "hold").Str
	}
	if want := redact.Text(text); streamed.String() != want || hold != "" {
		t.Errorf("streamed %q (hold %q), want %q", streamed.String(), hold, want)
	}
}
