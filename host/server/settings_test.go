package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
)

// settingCase shows what settings do: a configuration file that sets them,
// a server started from it, and requests whose answers show their effect.
type settingCase struct {
	// settings are the paths (as in docs/configuration.md) the case shows.
	settings []string
	// doc is YAML merged into the base file; $WASM stands for the default
	// mapping's WebAssembly build.
	doc  string
	show func(t *testing.T, h *harness)
	// reload, for live settings, is YAML merged into the case's file for
	// a second file the running server reloads (as its file watcher
	// does); reloaded shows the change took effect without a restart.
	reload   string
	reloaded func(t *testing.T, h *harness)
	// env is set in the environment before the file is loaded (the
	// secrets a file names by variable).
	env map[string]string
	// upstream, when set, is an OpenAI-compatible upstream started for
	// the case; $UPSTREAM in doc stands for its base URL.
	upstream *caseUpstream
	// vars, when set, starts what the case's file points at and returns
	// the placeholders of doc with their values.
	vars func(t *testing.T) map[string]string
}

// caseUpstream is a case's scripted upstream: its scripts, and the
// upstream once started (for the case's show to read what it was sent).
type caseUpstream struct {
	scripts []http.HandlerFunc
	*scripted
}

// settingCases is the table of settings shown through a real server
// started from a file. TestSettingsFromFile walks it; TestSettingsTable
// holds it against every setting of config.Config, so a new setting needs
// a case here (or a place in settingsNotShown).
var settingCases = []settingCase{
	{settings: []string{"tools.hosted"}, doc: "tools: {hosted: refuse}", show: showHostedRefused, reload: "tools: {hosted: withhold}", reloaded: func(t *testing.T, h *harness) {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"x","tools":[{"type":"web_search"}]}`)
		if b := body(t, res); res.StatusCode != 200 {
			t.Errorf("web_search with tools.hosted withhold: %d %s", res.StatusCode, b)
		}
	}},
	{settings: []string{"tools.hosted", "chains.<endpoint>.map_request", "chains.<endpoint>.translate"}, doc: "tools: {hosted: refuse}\nchains: {responses: {map_request: $WASM, translate: $WASM}, chat.completions: {map_request: $WASM, translate: $WASM}}", show: showHostedRefused},
	{settings: []string{"actors.missing"}, doc: "actors: {missing: require}", show: func(t *testing.T, h *harness) {
		apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`), 400, "invalid_header", "X-Service-Actor-Id")
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-actor-id", "u1", "x-service-actor-type", "user")
		if b := body(t, res); res.StatusCode != 200 {
			t.Errorf("with actor headers: %d %s", res.StatusCode, b)
		}
	}, reload: "actors: {missing: token}", reloaded: func(t *testing.T, h *harness) {
		served(t, h, "without actor headers after the reload")
	}},
	{settings: []string{"actors.default_tenant", "host.id"}, doc: "actors: {default_tenant: acme-default}\nhost: {id: host-from-file}", show: func(t *testing.T, h *harness) {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`)
		body(t, res)
		r := h.run(res.Header.Get("x-service-run-id"))
		if r.TenantID != "acme-default" || r.HostID != "host-from-file" {
			t.Errorf("run tenant %q host %q, want acme-default, host-from-file", r.TenantID, r.HostID)
		}
	}, reload: "actors: {default_tenant: other-default}", reloaded: func(t *testing.T, h *harness) {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`)
		body(t, res)
		if r := h.run(res.Header.Get("x-service-run-id")); r.TenantID != "other-default" {
			t.Errorf("after the reload, run tenant %q, want other-default", r.TenantID)
		}
	}},
	{settings: []string{"limits.max_body_bytes"}, doc: "limits: {max_body_bytes: 4096}", show: func(t *testing.T, h *harness) {
		apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"`+strings.Repeat("a", 5000)+`"}`), 413, "body_too_large", "")
		if res := h.do("POST", "/v1/responses", `{"model":"service","input":"`+strings.Repeat("a", 3000)+`"}`); res.StatusCode != 200 {
			t.Errorf("a body under the limit: %d %s", res.StatusCode, body(t, res))
		} else {
			body(t, res)
		}
	}, reload: "limits: {max_body_bytes: 8192}", reloaded: func(t *testing.T, h *harness) {
		if res := h.do("POST", "/v1/responses", `{"model":"service","input":"`+strings.Repeat("a", 5000)+`"}`); res.StatusCode != 200 {
			t.Errorf("a body under the raised limit: %d %s", res.StatusCode, body(t, res))
		} else {
			body(t, res)
		}
	}},
	{settings: []string{"limits.rate_per_second", "limits.burst"}, doc: "limits: {rate_per_second: 0.01, burst: 2}", show: func(t *testing.T, h *harness) {
		for i := range 2 {
			if res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`); res.StatusCode != 200 {
				t.Fatalf("request %d within the burst: %d %s", i, res.StatusCode, body(t, res))
			} else {
				body(t, res)
			}
		}
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`)
		if res.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
		apiError(t, res, 429, "rate_limit_exceeded", "")
	}, reload: "limits: {rate_per_second: 1000, burst: 5}", reloaded: func(t *testing.T, h *harness) {
		eventually(t, "served after the rate was raised", func() bool { return respond(t, h) == 200 })
	}},
	{settings: []string{"limits.history.max_references"}, doc: "limits: {history: {max_references: 1}}", show: func(t *testing.T, h *harness) {
		apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":[{"type":"item_reference","id":"msg_a"},{"type":"item_reference","id":"msg_b"}]}`),
			400, "invalid_body", "input")
	}},
	{settings: []string{"admin.metrics_public", "admin.listen"}, doc: "admin: {listen: '127.0.0.1:0', metrics_public: true}", show: func(t *testing.T, h *harness) {
		if h.Admin == "" {
			t.Fatal("no admin listener")
		}
		if res, b := h.admin("GET", "/metrics", "", nil, ""); res.StatusCode != 200 || !strings.Contains(string(b), "runedge_") {
			t.Errorf("/metrics without a token: %d", res.StatusCode)
		}
	}},
	{settings: []string{"metrics.tenant_label", "metrics.tenants"}, doc: "admin: {listen: '127.0.0.1:0'}\nmetrics: {tenant_label: true, tenants: [globex]}", show: func(t *testing.T, h *harness) {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "globex")
		body(t, res)
		if _, b := h.admin("GET", "/metrics", "", nil, tokAdmin); !strings.Contains(string(b), `tenant="globex"`) {
			t.Errorf("no tenant=\"globex\" label in /metrics")
		}
	}},
	{settings: []string{"provider.offline.token_delay", "limits.sse_keepalive"}, doc: "provider: {offline: {token_delay: 250ms}}\nlimits: {sse_keepalive: 100ms}", show: func(t *testing.T, h *harness) {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"one two","stream":true}`)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || !strings.Contains(string(b), "\n: keepalive\n") {
			t.Errorf("a slow stream without keepalives (%v):\n%s", err, b)
		}
	}, reload: "limits: {sse_keepalive: 1m}", reloaded: func(t *testing.T, h *harness) {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"one two","stream":true}`)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || strings.Contains(string(b), ": keepalive") {
			t.Errorf("keepalives 100 ms apart after a reload to 1m (%v):\n%s", err, b)
		}
	}},
	{settings: []string{"websocket.max_cached_responses"}, doc: "websocket: {max_cached_responses: 1}", show: func(t *testing.T, h *harness) {
		conn := sdkSocket(t, h)
		first := last(socketTurn(t, conn, create(`,"store":false,"input":"one"`))).Get("response.id").Str
		socketTurn(t, conn, create(`,"store":false,"input":"two"`))
		ev := last(socketTurn(t, conn, create(`,"store":false,"input":"three","previous_response_id":"`+first+`"`)))
		if ev.Get("error.code").Str != "previous_response_not_found" {
			t.Errorf("the first of two responses with room for one: %s", ev.Raw)
		}
	}, reload: "websocket: {max_cached_responses: 4}", reloaded: func(t *testing.T, h *harness) {
		conn := sdkSocket(t, h)
		first := last(socketTurn(t, conn, create(`,"store":false,"input":"one"`))).Get("response.id").Str
		socketTurn(t, conn, create(`,"store":false,"input":"two"`))
		ev := last(socketTurn(t, conn, create(`,"store":false,"input":"three","previous_response_id":"`+first+`"`)))
		if ev.Get("type").Str != "response.completed" {
			t.Errorf("the first of two responses with room for four: %s", ev.Raw)
		}
	}},
	{settings: []string{"media.allow_http", "media.allow_private_hosts"}, doc: "media: {allow_http: true, allow_private_hosts: true}", show: func(t *testing.T, h *harness) {
		if res := h.do("POST", "/v1/responses", responsesImage("http://127.0.0.1/cat.png")); res.StatusCode != 200 {
			t.Errorf("an http: image on a loopback host with both open: %d %s", res.StatusCode, body(t, res))
		} else {
			body(t, res)
		}
	}, reload: "media: {allow_http: false, allow_private_hosts: true}", reloaded: func(t *testing.T, h *harness) {
		apiError(t, h.do("POST", "/v1/responses", responsesImage("http://127.0.0.1/cat.png")), 400, "invalid_body", "input[0].content[1].image_url")
		if res := h.do("POST", "/v1/responses", responsesImage("https://127.0.0.1/cat.png")); res.StatusCode != 200 {
			t.Errorf("an https: image on a loopback host, private hosts still allowed: %d %s", res.StatusCode, body(t, res))
		} else {
			body(t, res)
		}
	}},
	{settings: []string{"usage.budgets[].name", "usage.budgets[].tenant", "usage.budgets[].tokens", "usage.budgets[].window", "usage.default_max_output_tokens"}, doc: "usage: {default_max_output_tokens: 50, budgets: [{name: tiny, tenant: t1, tokens: 40, window: day}]}", show: func(t *testing.T, h *harness) {
		// The estimate alone (the input, and 50 output tokens) is over
		// the 40 tokens: refused before a run; another tenant is served.
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "t1")
		if res.Header.Get("x-service-run-id") != "" {
			t.Errorf("a refused request has a run")
		}
		apiError(t, res, 429, "insufficient_quota", "")
		if res := h.do("POST", "/v1/responses", `{"model":"service","input":"x"}`, "x-service-tenant-id", "t2"); res.StatusCode != 200 {
			t.Errorf("another tenant: %d %s", res.StatusCode, body(t, res))
		} else {
			body(t, res)
		}
	}, reload: "usage: {budgets: [{name: tiny, tenant: t1, tokens: 100000, window: day}]}", reloaded: func(t *testing.T, h *harness) {
		served(t, h, "the tenant after its budget was raised", "x-service-tenant-id", "t1")
	}},
	{settings: []string{"limits.tenant_rate_per_second", "limits.tenant_burst"}, doc: "limits: {tenant_rate_per_second: 0.01, tenant_burst: 1}",
		show: showTenantRate, reload: "limits: {tenant_rate_per_second: 1000, tenant_burst: 5}", reloaded: showTenantRateReloaded},
	{settings: []string{"limits.read_body_timeout"}, doc: "limits: {read_body_timeout: 300ms}",
		show: showReadBodyTimeout, reload: "limits: {read_body_timeout: 5s}", reloaded: showSlowBodyServed},
	{settings: []string{"limits.write_timeout"}, doc: "limits: {write_timeout: 500ms, run_timeout: 1m}", show: showWriteTimeout},
	{settings: []string{"limits.max_in_flight"}, doc: "limits: {max_in_flight: 1}\nprovider: {offline: {token_delay: 300ms}}", show: showMaxInFlight},
	{settings: []string{"limits.max_in_flight_per_tenant"}, doc: "limits: {max_in_flight_per_tenant: 1}\nprovider: {offline: {token_delay: 300ms}}",
		show: showMaxInFlightPerTenant},
	{settings: []string{"limits.max_in_flight_per_token"}, doc: "limits: {max_in_flight_per_token: 1}\nprovider: {offline: {token_delay: 300ms}}",
		show: showMaxInFlightPerToken},
	bytesInFlightCase(),
	{settings: []string{"limits.max_background"}, doc: "limits: {max_background: 1}\nprovider: {offline: {token_delay: 300ms}}", show: showMaxBackground},
	{settings: []string{"limits.run_timeout"}, doc: "limits: {run_timeout: 300ms}\nprovider: {offline: {token_delay: 200ms}}", show: showRunTimeout},
	{settings: []string{"limits.read_header_timeout"}, doc: "limits: {read_header_timeout: 500ms}", show: showReadHeaderTimeout},
	{settings: []string{"limits.max_admin_body_bytes"}, doc: "limits: {max_admin_body_bytes: 1000}", show: showMaxAdminBody,
		reload: "limits: {max_admin_body_bytes: 4000}", reloaded: showAdminBodyRaised},
	{settings: []string{"limits.history.max_history_bytes"}, doc: "limits: {history: {max_history_bytes: 100000}}", show: showMaxHistoryBytes},
	{settings: []string{"limits.history.max_reference_bytes"}, doc: "limits: {history: {max_reference_bytes: 100000}}", show: showMaxReferenceBytes},
	{settings: []string{"limits.history.max_stored_events"}, doc: "limits: {history: {max_stored_events: 50}}\nprovider: {offline: {token_delay: 25ms}}", show: showMaxStoredEvents},
	{settings: []string{"limits.history.max_replays_per_tenant"}, doc: "limits: {history: {max_replays_per_tenant: 1}}\nprovider: {offline: {token_delay: 50ms}}",
		show: showMaxReplaysPerTenant},
	{settings: []string{"websocket.idle_timeout"}, doc: "websocket: {idle_timeout: 300ms}",
		show: showSocketIdleTimeout, reload: "websocket: {idle_timeout: 1m}", reloaded: showSocketNotIdle},
	{settings: []string{"websocket.max_age"}, doc: "websocket: {max_age: 1s}", show: showSocketMaxAge,
		reload: "websocket: {max_age: 1h}", reloaded: showSocketYoung},
	{settings: []string{"websocket.max_sockets", "websocket.max_sockets_per_tenant", "websocket.max_sockets_per_token"},
		doc:  "websocket: {max_sockets: 4, max_sockets_per_tenant: 2, max_sockets_per_token: 3}",
		show: showSocketCaps, reload: "websocket: {max_sockets: 10}", reloaded: showSocketCapsRaised},
	{settings: []string{"tokens[].name", "tokens[].hash", "tokens[].tenant", "tokens[].admin"},
		doc:  "tokens: [{name: app, hash: $HASH_APP}, {name: acme-app, hash: $HASH_ACME, tenant: acme}, {name: ops, hash: $HASH_ADMIN, admin: true}]",
		show: showTokens, reload: "tokens: [{name: app, hash: $HASH_APP}, {name: ops, hash: $HASH_ADMIN, admin: true}]", reloaded: showTokenRemoved},
	{settings: []string{"metrics.max_tenant_labels"}, doc: "metrics: {tenant_label: true, tenants: [first, second], max_tenant_labels: 1}", show: showMaxTenantLabels},
	{settings: []string{"usage.budgets[].token", "usage.budgets[].actor"},
		doc:      "usage: {default_max_output_tokens: 50, budgets: [{tenant: t1, token: app, tokens: 40, window: day}, {tenant: t2, actor: u1, tokens: 40, window: 6h}]}",
		show:     showNarrowBudgets,
		reload:   "usage: {default_max_output_tokens: 50, budgets: [{tenant: t1, token: app, tokens: 100000, window: day}, {tenant: t2, actor: u1, tokens: 40, window: 6h}]}",
		reloaded: showNarrowBudgetsRaised},
	{settings: []string{"usage.prices[].provider", "usage.prices[].input_per_million", "usage.prices[].output_per_million", "usage.budgets[].cost"},
		doc:  "usage: {prices: [{provider: offline, input_per_million: 2, output_per_million: 8}], budgets: [{tenant: capped, cost: 0.0001, window: day}]}",
		show: showPrices},
	providerCase(),
	caseWithUpstream([]string{"provider.openai.max_attempts"}, "provider: {kind: openai, openai: {base_url: $UPSTREAM, model: m, max_attempts: 1}}",
		[]http.HandlerFunc{failingUpstream, wholeOf("ok")}, showOneAttempt),
	// One retry after backoff_base 1 s waits 0.5–1 s (the default base
	// 250 ms: under 0.25 s).
	caseWithUpstream([]string{"provider.openai.backoff_base"}, "provider: {kind: openai, openai: {base_url: $UPSTREAM, model: m, max_attempts: 2, backoff_base: 1s}}",
		[]http.HandlerFunc{failingUpstream, wholeOf("ok")}, showBackoff(2, 450*time.Millisecond, 3*time.Second)),
	// Three retries, each capped at 400 ms, wait 0.6–1.2 s (uncapped,
	// doubling from 400 ms: at least 1.4 s).
	caseWithUpstream([]string{"provider.openai.backoff_max"},
		"provider: {kind: openai, openai: {base_url: $UPSTREAM, model: m, max_attempts: 4, backoff_base: 400ms, backoff_max: 400ms}}",
		[]http.HandlerFunc{failingUpstream, failingUpstream, failingUpstream, wholeOf("ok")}, showBackoff(4, 550*time.Millisecond, 1350*time.Millisecond)),
	caseWithUpstream([]string{"provider.openai.first_byte_timeout"}, "provider: {kind: openai, openai: {base_url: $UPSTREAM, model: m, max_attempts: 1, first_byte_timeout: 300ms}}",
		[]http.HandlerFunc{silentUpstream}, func(*caseUpstream) func(*testing.T, *harness) { return showUpstreamTimeout }),
	caseWithUpstream([]string{"provider.openai.idle_timeout"}, "provider: {kind: openai, openai: {base_url: $UPSTREAM, model: m, max_attempts: 1, idle_timeout: 300ms}}",
		[]http.HandlerFunc{stallingUpstream}, func(*caseUpstream) func(*testing.T, *harness) { return showUpstreamTimeout }),
	compactionCase(),
	{settings: []string{"websocket.ping_interval"}, doc: "websocket: {ping_interval: 200ms}\nlimits: {write_timeout: 1m}\nprovider: {offline: {token_delay: 20ms}}",
		show: showPingInterval},
	{settings: []string{"websocket.max_socket_bytes"}, doc: "websocket: {max_socket_bytes: 262144}\nprovider: {offline: {token_delay: 20ms}}",
		show: showSocketBytes},
	tracingCase(),
	storeCase(),
	{settings: []string{"plugins.call_timeout", "plugins.call_timeout_per_mib"},
		doc:  "plugins: {call_timeout: 1ms, call_timeout_per_mib: 1ms}\nchains: {responses: {map_request: $WASM, translate: $WASM}}",
		show: showPluginCallTimeout},
	{settings: []string{"store.retention"}, doc: "store: {retention: 1m}", show: showRetention},
	{settings: []string{"admin.ui.trusted_proxies"}, doc: "admin: {ui: {trusted_proxies: [127.0.0.1/32]}}", show: showTrustedProxies},
	{settings: []string{"limits.shutdown_grace"}, doc: "limits: {shutdown_grace: 300ms}\nprovider: {offline: {token_delay: 500ms}}", show: showShutdownGrace},
	caseWithUpstream([]string{"usage.prices[].model", "usage.prices[].cached_input_per_million"},
		"provider: {kind: openai, openai: {base_url: $UPSTREAM, model: m}}\n"+
			"usage: {prices: [{provider: openai, input_per_million: 1000, output_per_million: 1000}, {provider: openai, model: m, input_per_million: 2, cached_input_per_million: 1, output_per_million: 8}]}",
		[]http.HandlerFunc{cachingUpstream}, showModelPrice),
	{settings: []string{"admin.ui.session_ttl", "admin.ui.secure_cookie"}, doc: "admin: {ui: {session_ttl: 1s, secure_cookie: true}}", show: showUISession},
}

// settingsNotShown are the settings no case shows yet: each is documented
// and validated, but its effect through a server started from a file is
// not tested here (most are shown by tests that build the configuration in
// code). The list only shrinks: a setting that gets a case leaves it.
var settingsNotShown = []string{
	"listen", // the harness opens its own listener
	"host.heap_floor_bytes",
	"store.dsn", "store.dsn_env", // PostgreSQL: the drivers' conformance suite and the fleet tests
	"store.commit_window", "store.commit_batch",
	"provider.openai.connect_timeout", // needs an address that never answers a connect
	"plugins.cache_dir", "plugins.pool_size", "plugins.max_memory_pages",
	"plugins.store_dir", "plugins.origins", "plugins.trusted_keys",
	"plugins.stream_window", // batches only a plugin that exports map_stream; the default mapping does not
	"log.format",            // the harness gives the server its logger; runedge serve builds it from the file
	// Shown by tests that build the configuration in code: leases (runner
	// and host/fleet).
	"runs.lease", "runs.lease_renew", "runs.max_drives",
}

func showHostedRefused(t *testing.T, h *harness) {
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","tools":[{"type":"web_search"}]}`),
		400, "unsupported_parameter", "tools[0].type")
	apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","tools":[{"type":"function","name":"f"},{"type":"mcp","server_label":"s"}]}`),
		400, "unsupported_parameter", "tools[1].type")
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"x","tools":[{"type":"function","name":"f"}]}`)
	if b := body(t, res); res.StatusCode != 200 {
		t.Errorf("without hosted tools: %d %s", res.StatusCode, b)
	}
}

// TestSettingsFromFile starts a server from each case's file (written and
// loaded as `runedge serve --config` loads it) and shows what its settings
// do; a case with a reload then reloads a changed file on the running
// server and shows the change took effect.
func TestSettingsFromFile(t *testing.T) {
	for _, c := range settingCases {
		t.Run(strings.Join(c.settings, "+"), func(t *testing.T) {
			base := configtest.New(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if c.upstream != nil {
				c.upstream.scripted = newScripted(t, c.upstream.scripts...)
				c.doc = strings.ReplaceAll(c.doc, "$UPSTREAM", c.upstream.srv.URL+"/v1")
			}
			if c.vars != nil {
				for k, v := range c.vars(t) {
					c.doc = strings.ReplaceAll(c.doc, k, v)
				}
			}
			h := serveConfig(t, loadFile(t, base, c.doc))
			c.show(t, h)
			if c.reload == "" {
				return
			}
			if err := h.srv.Reload(t.Context(), loadFile(t, base, c.doc, c.reload)); err != nil {
				t.Fatalf("reload: %v", err)
			}
			c.reloaded(t, h)
		})
	}
}

// TestSettingsTable: every setting of the file is shown by a case or
// listed as not shown, never both.
func TestSettingsTable(t *testing.T) {
	shown := map[string]bool{}
	for _, c := range settingCases {
		for _, s := range c.settings {
			shown[s] = true
		}
	}
	all := settingPaths(reflect.TypeFor[config.Config](), "")
	for _, s := range all {
		switch {
		case shown[s] && slices.Contains(settingsNotShown, s):
			t.Errorf("%s is shown by a case: take it out of settingsNotShown", s)
		case !shown[s] && !slices.Contains(settingsNotShown, s):
			t.Errorf("%s: no case shows it (add one to settingCases)", s)
		}
	}
	for _, s := range append(slices.Collect(mapKeys(shown)), settingsNotShown...) {
		if !slices.Contains(all, s) {
			t.Errorf("%s is not a setting of config.Config", s)
		}
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// settingPaths lists the leaf settings of typ as the file spells them:
// inline parts flattened, list elements as [], chains' keys as <endpoint>.
func settingPaths(typ reflect.Type, prefix string) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == reflect.TypeFor[config.Duration]():
		return []string{prefix}
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Struct:
		return settingPaths(typ.Elem(), prefix+"[]")
	case typ.Kind() == reflect.Map:
		return settingPaths(typ.Elem(), prefix+".<endpoint>")
	case typ.Kind() != reflect.Struct:
		return []string{prefix}
	}
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")
		switch {
		case tag[0] == "-" || !f.IsExported():
		case len(tag) > 1 && tag[1] == "inline":
			out = append(out, settingPaths(f.Type, prefix)...)
		default:
			p := tag[0]
			if prefix != "" {
				p = prefix + "." + p
			}
			out = append(out, settingPaths(f.Type, p)...)
		}
	}
	return out
}

// loadFile writes runedge.yaml in base's directory — base's state
// directories, the tokens tokApp and tokAdmin, an admin listener, and each
// of docs merged in turn — and loads it. In docs, $WASM stands for the
// default mapping's WebAssembly build and $HASH_APP, $HASH_ACME,
// $HASH_ADMIN for the hashes of tokApp, tokAcme, tokAdmin.
func loadFile(t *testing.T, base *config.Config, docs ...string) *config.Config {
	t.Helper()
	file := map[string]any{
		"tokens": []any{
			map[string]any{"name": "app", "hash": auth.HashToken(tokApp)},
			map[string]any{"name": "ops", "hash": auth.HashToken(tokAdmin), "admin": true},
		},
		"store": map[string]any{"path": base.Store.Path},
		"plugins": map[string]any{"cache_dir": base.Plugins.CacheDir, "store_dir": base.Plugins.StoreDir,
			"pool_size": base.Plugins.PoolSize, "call_timeout": base.Plugins.CallTimeout.Std().String()},
		"admin": map[string]any{"listen": "127.0.0.1:0"},
	}
	for _, doc := range docs {
		if strings.Contains(doc, "$WASM") {
			doc = strings.ReplaceAll(doc, "$WASM", configtest.DefaultWasm(t))
		}
		doc = strings.NewReplacer("$HASH_APP", auth.HashToken(tokApp), "$HASH_ACME", auth.HashToken(tokAcme),
			"$HASH_ADMIN", auth.HashToken(tokAdmin)).Replace(doc)
		var add map[string]any
		if err := yaml.Unmarshal([]byte(doc), &add); err != nil {
			t.Fatalf("case file: %v", err)
		}
		merge(file, add)
	}
	b, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(base.Dir, "runedge.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return cfg
}

// merge adds src to dst, section by section.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if have, ok := dst[k].(map[string]any); ok {
				merge(have, sub)
				continue
			}
		}
		dst[k] = v
	}
}
