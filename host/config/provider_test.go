package config

import (
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner/provider/openai"
)

func TestOpenAIProviderValues(t *testing.T) {
	c, err := Parse([]byte(`
provider:
  kind: openai
  openai:
    base_url: http://127.0.0.1:8000/v1
    api_key_env: VLLM_KEY
    model: meta-llama/Llama-3.1-8B-Instruct
    include_usage: true
    connect_timeout: 2s
    first_byte_timeout: 90s
    idle_timeout: 15s
    max_attempts: 1
    backoff_base: 100ms
    backoff_max: 1s
`))
	if err != nil {
		t.Fatal(err)
	}
	want := OpenAI{BaseURL: "http://127.0.0.1:8000/v1", APIKeyEnv: "VLLM_KEY", Model: "meta-llama/Llama-3.1-8B-Instruct",
		IncludeUsage: true, ConnectTimeout: Dur(2 * time.Second), FirstByteTimeout: Dur(90 * time.Second),
		IdleTimeout: Dur(15 * time.Second), MaxAttempts: 1, BackoffBase: Dur(100 * time.Millisecond), BackoffMax: Dur(time.Second)}
	if c.Provider.Kind != ProviderOpenAI || c.Provider.OpenAI != want {
		t.Fatalf("provider %+v, want %+v", c.Provider.OpenAI, want)
	}
}

func TestOpenAIProviderDefaults(t *testing.T) {
	c, err := Parse([]byte("provider: {kind: openai, openai: {model: gpt-4o-mini, api_key_env: OPENAI_API_KEY}}"))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Provider.OpenAI
	if o.BaseURL != DefaultOpenAIBaseURL || o.IncludeUsage || o.MaxAttempts != openai.DefaultMaxAttempts ||
		o.ConnectTimeout.Std() != openai.DefaultConnectTimeout || o.FirstByteTimeout.Std() != openai.DefaultFirstByteTimeout ||
		o.IdleTimeout.Std() != openai.DefaultIdleTimeout || o.BackoffBase.Std() != openai.DefaultBackoffBase ||
		o.BackoffMax.Std() != openai.DefaultBackoffMax {
		t.Fatalf("defaults not applied: %+v", o)
	}
}

func TestOpenAIProviderRefusals(t *testing.T) {
	const ok = "kind: openai, openai: {model: m"
	for _, tc := range []struct{ doc, field, says string }{
		{"provider: {kind: openai}", "provider.openai.model", "is required"},
		{"provider: {" + ok + ", base_url: 'localhost:8000'}}", "provider.openai.base_url", "http(s) URL"},
		{"provider: {" + ok + ", base_url: 'ftp://x/v1'}}", "provider.openai.base_url", "http(s) URL"},
		{"provider: {" + ok + ", api_key_env: 'sk-abc123'}}", "provider.openai.api_key_env", "not the key itself"},
		{"provider: {" + ok + ", max_attempts: 11}}", "provider.openai.max_attempts", "want 1 to 10"},
		{"provider: {" + ok + ", max_attempts: -1}}", "provider.openai.max_attempts", "want 1 to 10"},
		{"provider: {" + ok + ", backoff_base: 5s, backoff_max: 1s}}", "provider.openai.backoff_base", "above backoff_max"},
		{"provider: {" + ok + ", idle_timeout: forever}}", "provider.openai.idle_timeout", "not a duration"},
		{"provider: {" + ok + ", first_byte_timeout: -1s}}", "provider.openai.first_byte_timeout", "negative"},
		{"provider: {" + ok + ", api_key: sk-abc}}", "api_key", "not found"},
		{"provider: {kind: anthropic}", "provider.kind", "want offline or openai"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: want an error naming %s saying %q, got %v", tc.doc, tc.field, tc.says, err)
		}
	}
	// The openai block is not checked while another provider is chosen.
	if _, err := Parse([]byte("provider: {kind: offline, openai: {base_url: nowhere}}")); err != nil {
		t.Fatalf("an unused openai block was refused: %v", err)
	}
}
