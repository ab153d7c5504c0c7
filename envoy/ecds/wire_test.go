package ecds

import (
	"strings"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

var (
	shaA = strings.Repeat("a", 64)
	shaB = strings.Repeat("b", 64)
)

func TestEncodeDecode(t *testing.T) {
	in := ChainRef{
		MapRequest: PluginRef{URL: "http://xds:18001/plugins/" + shaA, SHA256: shaA},
		Translate:  PluginRef{URL: "https://xds/plugins/" + shaB, SHA256: shaB},
	}
	res, err := Encode("responses", in)
	if err != nil {
		t.Fatal(err)
	}
	if res.GetName() != "runedge.chain.responses" {
		t.Fatalf("name %q", res.GetName())
	}
	ep, out, err := Decode(res)
	if err != nil || ep != "responses" || out != in {
		t.Fatalf("Decode: %q %+v %v", ep, out, err)
	}
	if _, err := Encode("responses", ChainRef{}); err == nil {
		t.Fatal("Encode accepted a chain without references")
	}
}

// TestDecodeRefuses: what a host could not apply as written is an error
// that says what is wrong, so the NACK tells the operator.
func TestDecodeRefuses(t *testing.T) {
	good := map[string]any{"url": "http://xds/plugins/" + shaA, "sha256": shaA}
	mk := func(name string, fields map[string]any) *core.TypedExtensionConfig {
		s, err := structpb.NewStruct(fields)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := anypb.New(s)
		return &core.TypedExtensionConfig{Name: name, TypedConfig: a}
	}
	notStruct, _ := anypb.New(wrapperspb.String("x"))
	for _, c := range []struct {
		res  *core.TypedExtensionConfig
		want string
	}{
		{mk("envoy.filters.http.wasm", map[string]any{}), "is not a chain resource"},
		{mk("runedge.chain.", map[string]any{}), "is not a chain resource"},
		{&core.TypedExtensionConfig{Name: "runedge.chain.responses", TypedConfig: notStruct}, "want google.protobuf.Struct"},
		{mk("runedge.chain.responses", map[string]any{"map_request": good}), "translate: missing"},
		{mk("runedge.chain.responses", map[string]any{"map_request": good, "translate": good, "model": good}), `unknown stage "model"`},
		{mk("runedge.chain.responses", map[string]any{"map_request": good, "translate": map[string]any{"url": "file:///etc/passwd", "sha256": shaA}}), "translate.url: want an http(s) URL"},
		{mk("runedge.chain.responses", map[string]any{"map_request": map[string]any{"url": "http://x/p", "sha256": "ABC"}, "translate": good}), "map_request.sha256: want 64 lowercase hex"},
	} {
		if _, _, err := Decode(c.res); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.res.GetName(), err, c.want)
		}
	}
}
