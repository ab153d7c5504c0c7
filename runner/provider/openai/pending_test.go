package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/runedge/runedge/internal/pendingtest"
	"github.com/runedge/runedge/runner"
)

// pendingLits are client texts with every class of escape that a host
// keeps pending (runner.Message.SetContentPending).
var pendingLits = []string{`"\"q\" \\ \/ \b\f\n\r\t \u0000 \u001f \u007F"`, `"html <b>&amp;</b> \u003c\u003e\u0026 \n"`,
	`"sep \u2028\u2029 ` + "\u2028" + ` pairs \ud83d\ude00 \uD83D\uDE00 ` + "\U0001F600" + `"`, `"non-ASCII é \u00e9\u6f22"`}

// TestPendingTextsGoUpstreamAsDecoded: a request whose texts are pending
// goes upstream as the same JSON value as the request with them decoded,
// by the plain body (their literals copied) and by encoding/json (a tool
// sends it there), and the estimate counts the decoded texts. It fails
// when a pending text's escaped bytes are read as its text.
func TestPendingTextsGoUpstreamAsDecoded(t *testing.T) {
	var pending, decoded []runner.Message
	for _, lit := range pendingLits {
		p, d := pendingtest.Message(t, "user", lit)
		pending, decoded = append(pending, p), append(decoded, d)
	}
	p := &Provider{cfg: Config{Model: "m"}}
	if !p.TakesPendingTexts() {
		t.Fatal("the openai provider does not take pending texts")
	}
	for _, tools := range [][]runner.Tool{nil, {{Name: "f"}}} {
		want, err := p.body(runner.ProviderRequest{Messages: decoded, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.body(runner.ProviderRequest{Messages: append([]runner.Message(nil), pending...), Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%v: %s", err, got)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("tools %v: upstream body\n%s\nwant the value of\n%s", tools != nil, got, want)
		}
	}
	if g, w := EstimateInputTokens(pending, nil), EstimateInputTokens(decoded, nil); g != w {
		t.Errorf("estimate %d, want %d", g, w)
	}
}
