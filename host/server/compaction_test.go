package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/compaction"
	"github.com/runedge/runedge/host/config"
)

// compactKeys configures compaction.keys with ids, each secret set in the
// environment under CMP_<ID>.
func compactKeys(t *testing.T, ids ...string) func(*config.Config) {
	for _, id := range ids {
		t.Setenv("CMP_"+strings.ToUpper(id), "secret of key "+id+strings.Repeat(".", 32))
	}
	return func(c *config.Config) {
		for _, id := range ids {
			c.Compaction.Keys = append(c.Compaction.Keys, compaction.KeyConfig{ID: id, SecretEnv: "CMP_" + strings.ToUpper(id)})
		}
	}
}

// post sends a body and returns the reply's status and body.
func (h *harness) post(path, b string) (int, string) {
	h.t.Helper()
	res := h.do("POST", path, b, "x-service-tenant-id", "t1")
	return res.StatusCode, string(body(h.t, res))
}

// chainTurns stores one response per input, each continuing the one
// before by previous_response_id, and returns the last one's id.
func (h *harness) chainTurns(says ...string) string {
	h.t.Helper()
	prev := ""
	for _, say := range says {
		b := `{"model":"service","input":"` + say + `"`
		if prev != "" {
			b += `,"previous_response_id":"` + prev + `"`
		}
		code, reply := h.post("/v1/responses", b+"}")
		if code != 200 {
			h.t.Fatalf("turn %q: %d %s", say, code, reply)
		}
		prev = gjson.Get(reply, "id").Str
	}
	return prev
}

// compactItem returns the compaction item of a compaction reply, as JSON.
func compactItem(t *testing.T, reply string) string {
	t.Helper()
	out := gjson.Get(reply, "output").Array()
	if len(out) == 0 || out[len(out)-1].Get("type").Str != "compaction" {
		t.Fatalf("the output does not end in a compaction item: %s", reply)
	}
	return out[len(out)-1].Raw
}

// wantSealed fails unless enc is sealed with key id and plain cannot be
// read in it: not in the text, nor in its base64 payload decoded. (A check
// for a short word in the text alone failed by chance: three letters turn
// up in kilobytes of random base64 about once in thirty runs.)
func wantSealed(t *testing.T, enc, id, plain string) {
	t.Helper()
	payload, ok := strings.CutPrefix(enc, "rc1."+id+".")
	if !ok {
		t.Fatalf("encrypted_content %.40q…: want sealed with key %s", enc, id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatalf("encrypted_content: the payload is not base64url: %v", err)
	}
	if strings.Contains(enc, plain) || bytes.Contains(raw, []byte(plain)) {
		t.Fatalf("encrypted_content shows %q: want it unreadable", plain)
	}
	// And it is there to hide: opened with the key (compactKeys' secret,
	// the harness's tenant t1), the summary holds plain.
	keys, err := compaction.NewKeys([]compaction.Key{{ID: id, Secret: []byte("secret of key " + id + strings.Repeat(".", 32))}})
	if err != nil {
		t.Fatal(err)
	}
	if opened, err := keys.Open("t1", enc); err != nil || !strings.Contains(opened, plain) {
		t.Fatalf("encrypted_content opened: %.80q, %v; want it to hold %q", opened, err, plain)
	}
}

// withEncrypted returns the compaction item with its encrypted_content
// replaced by f of it.
func withEncrypted(item string, f func(string) string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(item), &m)
	m["encrypted_content"] = f(m["encrypted_content"].(string))
	b, _ := json.Marshal(m)
	return string(b)
}

// A long conversation (three turns chained by previous_response_id) is
// compacted: the reply matches OpenAI's CompactResource, its output is the
// user messages then exactly one compaction item, and the compaction is a
// completed run of the history. A new chain that carries the item
// (store:false) gives the agent the summary, which the offline provider
// names. A tampered item, one naming an unknown key, or another tenant's,
// is a 400 naming the input item.
func TestCompactRoundTrip(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	prev := h.chainTurns("my name is Ada", "I like green tea", "my cat is Tom")
	code, reply := h.post("/v1/responses/compact", `{"model":"service","previous_response_id":"`+prev+`","input":"keep the plan","instructions":"be brief"}`)
	if code != 200 {
		t.Fatalf("compact: %d %s", code, reply)
	}
	conforms(t, openAPIDef(t, "testdata/openapi/compact.json", "CompactResource"), "compaction reply", reply)
	out := gjson.Get(reply, "output").Array()
	var users []string
	for _, it := range out[:len(out)-1] {
		if it.Get("type").Str != "message" || it.Get("role").Str != "user" {
			t.Errorf("before the compaction item, %s is not a user message", it.Raw)
		}
		users = append(users, it.Get("content.0.text").Str)
	}
	if got, want := strings.Join(users, "|"), "my name is Ada|I like green tea|my cat is Tom|keep the plan"; got != want {
		t.Errorf("user messages %q, want %q", got, want)
	}
	item := compactItem(t, reply)
	wantSealed(t, gjson.Get(item, "encrypted_content").Str, "k1", "my name is Ada")

	run := h.run("run_" + strings.TrimPrefix(gjson.Get(reply, "id").Str, "resp_"))
	if run.Endpoint != "responses.compact" || run.Status != "completed" {
		t.Errorf("the compaction run: endpoint %q status %q", run.Endpoint, run.Status)
	}
	if st := h.do("GET", "/v1/responses/"+gjson.Get(reply, "id").Str, "", "x-service-tenant-id", "t1"); st.StatusCode != 404 {
		t.Errorf("a compaction is not a stored response, GET answered %d", st.StatusCode)
		st.Body.Close()
	}

	next := func(it string) (int, string) {
		return h.post("/v1/responses", `{"model":"service","store":false,"input":[`+it+`,{"role":"user","content":"what do you know"}]}`)
	}
	code, answer := next(item)
	if code != 200 {
		t.Fatalf("new chain: %d %s", code, answer)
	}
	want := "You said: what do you know (earlier: Summary: my name is Ada | I like green tea | my cat is Tom | keep the plan)"
	if got := gjson.Get(answer, "output_text").Str; got != want {
		t.Errorf("the agent answered %q, want %q", got, want)
	}

	// The item as a client's JSON encoder may escape it (any character
	// as \u00XX) opens the same.
	escaped := strings.Replace(item, `"rc1.k1.`, `"\u0072c1.k1.`, 1)
	if escaped == item {
		t.Fatalf("the item %s has no sealed prefix to escape", item)
	}
	if code, answer := next(escaped); code != 200 || gjson.Get(answer, "output_text").Str != want {
		t.Errorf("the item with an escaped encrypted_content: %d %s, want the agent to answer %q", code, answer, want)
	}

	// Compacting again folds the earlier summary into the new one; a
	// stream:true there is ignored (the answer is one JSON object).
	code, again := h.post("/v1/responses/compact", `{"model":"service","stream":true,"input":[`+item+`,{"role":"user","content":"and a dog"}]}`)
	if code != 200 {
		t.Fatalf("compact again: %d %s", code, again)
	}
	code, answer = next(compactItem(t, again))
	if want := "(earlier: Summary: my name is Ada | I like green tea | my cat is Tom | keep the plan | and a dog)"; code != 200 || !strings.Contains(gjson.Get(answer, "output_text").Str, want) {
		t.Errorf("after a second compaction: %d %s, want it to name %q", code, answer, want)
	}

	for name, f := range map[string]func(string) string{
		"tampered": func(s string) string {
			b := []byte(s)
			i := len(b) - 5
			b[i] ^= 1
			if b[i] == '-' || b[i] == '_' || b[i] < '0' {
				b[i] = 'A'
			}
			return string(b)
		},
		"unknown key": func(s string) string { return strings.Replace(s, "rc1.k1.", "rc1.k9.", 1) },
		"not sealed":  func(string) string { return "hello" },
	} {
		code, e := next(withEncrypted(item, f))
		if code != 400 || gjson.Get(e, "error.code").Str != "invalid_body" || gjson.Get(e, "error.param").Str != "input[0].encrypted_content" {
			t.Errorf("%s: %d %s, want 400 invalid_body naming input[0].encrypted_content", name, code, e)
		}
		if name == "unknown key" && !strings.Contains(gjson.Get(e, "error.message").Str, "key") {
			t.Errorf("unknown key: the message does not say so: %s", e)
		}
	}
	// Another tenant's item does not open: it answers as a forgery.
	res := h.do("POST", "/v1/responses", `{"model":"service","store":false,"input":[`+item+`,{"role":"user","content":"hi"}]}`,
		"x-service-tenant-id", "t2")
	if e := body(t, res); res.StatusCode != 400 || gjson.GetBytes(e, "error.param").Str != "input[0].encrypted_content" {
		t.Errorf("tenant t2 with t1's item: %d %s", res.StatusCode, e)
	}
}

// The compact endpoint's own refusals: model is required, conversation
// is not supported yet, and only POST is served.
func TestCompactRefusals(t *testing.T) {
	h := start(t, nil)
	for _, c := range []struct {
		body, code, param string
	}{
		{`{"input":"hi"}`, "", "model"},
		{`{"model":"service","previous_response_id":"resp_x"}`, "previous_response_not_found", "previous_response_id"},
		{`{"model":"service","input":"hi","conversation":"conv_1","previous_response_id":"resp_x"}`, "invalid_body", "conversation"},
	} {
		code, e := h.post("/v1/responses/compact", c.body)
		if code != 400 || gjson.Get(e, "error.param").Str != c.param || (c.code != "" && gjson.Get(e, "error.code").Str != c.code) {
			t.Errorf("%s: %d %s, want 400 %s naming %s", c.body, code, e, c.code, c.param)
		}
	}
	res := h.do("GET", "/v1/responses/compact", "", "x-service-tenant-id", "t1")
	if b := body(t, res); res.StatusCode != 405 || res.Header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/responses/compact: %d %s", res.StatusCode, b)
	}
}

// A key rotation keeps old items readable: a host whose keys are [k2, k1]
// opens what a host with [k1] sealed, and seals with k2; a host that
// dropped k1 refuses the old item (400 naming it).
func TestCompactKeyRotation(t *testing.T) {
	keys := compactKeys(t, "k1", "k2")
	only := func(ids ...string) func(*config.Config) {
		return func(c *config.Config) {
			keys(c)
			var ks []compaction.KeyConfig
			for _, id := range ids {
				for _, k := range c.Compaction.Keys {
					if k.ID == id {
						ks = append(ks, k)
					}
				}
			}
			c.Compaction.Keys = ks
		}
	}
	old := start(t, only("k1"))
	_, reply := old.post("/v1/responses/compact", `{"model":"service","input":"the old secret word is lark"}`)
	item := compactItem(t, reply)

	rotated := start(t, only("k2", "k1"))
	ask := `{"model":"service","store":false,"input":[` + item + `,{"role":"user","content":"word?"}]}`
	code, answer := rotated.post("/v1/responses", ask)
	if code != 200 || !strings.Contains(gjson.Get(answer, "output_text").Str, "lark") {
		t.Errorf("after rotation the old item: %d %s", code, answer)
	}
	_, fresh := rotated.post("/v1/responses/compact", `{"model":"service","input":"new"}`)
	if enc := gjson.Get(compactItem(t, fresh), "encrypted_content").Str; !strings.HasPrefix(enc, "rc1.k2.") {
		t.Errorf("the rotated host sealed with %q, want key k2", enc[:min(len(enc), 8)])
	}

	retired := start(t, only("k2"))
	code, e := retired.post("/v1/responses", ask)
	if code != 400 || gjson.Get(e, "error.param").Str != "input[0].encrypted_content" {
		t.Errorf("k1 retired: %d %s, want 400 naming the item", code, e)
	}
}
