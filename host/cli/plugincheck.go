package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner/native"
)

// pluginCheck is `runedge plugin check [flags] FILE`. It loads the plugin as
// a server would, which runs its self-test, then maps a round of sample
// requests of each endpoint (simple, streaming, structured output) through
// every hook the plugin exports and prints what comes out and how it
// differs from the default mapping, so an operator sees what a swap would
// put in front of clients before doing it. Any failure is an error, hence
// exit status 1.
//
// A plugin may serve one endpoint only: an endpoint where every call faults
// is reported as not served, unless --endpoint asks for it. At least one
// endpoint must be served.
func pluginCheck(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("plugin check", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	only := fs.String("endpoint", "", "check only this endpoint (chat.completions or responses); its failures all count")
	tenant := fs.String("tenant", "check", "the tenant_id the sample requests act as")
	full := fs.Bool("full", false, "print every output in full too")
	cacheDir := fs.String("cache-dir", "", "wazero compilation cache (e.g. the server's data/wazero-cache); default: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want `plugin check [--endpoint E] [--tenant T] [--full] [--cache-dir DIR] FILE`")
	}
	if *only != "" && *only != abi.EndpointChat && *only != abi.EndpointResponses {
		return fmt.Errorf("--endpoint %q: want %s or %s", *only, abi.EndpointChat, abi.EndpointResponses)
	}
	engine, err := runtime.NewEngine(ctx, runtime.EngineConfig{CacheDir: *cacheDir})
	if err != nil {
		return err
	}
	defer engine.Close(ctx)
	p, err := engine.Load(ctx, fs.Arg(0), runtime.Options{PoolSize: 1})
	if err != nil {
		return err
	}
	defer p.Close(ctx)
	version := p.Version()
	if version == "" {
		version = "(not declared)"
	}
	var hooks []string
	for _, h := range checkedHooks {
		if p.Has(h) {
			hooks = append(hooks, h.String())
		}
	}
	fmt.Fprintf(env.Stdout, "plugin   %s (%s)\nversion  %s\nsha256   %s\nhooks    %s\nloaded; its self-test, if it has one, passed\n",
		p.Name(), fs.Arg(0), version, p.SHA256(), strings.Join(hooks, ", "))
	c := &checker{plugin: p, tenant: *tenant, full: *full}
	return c.run(ctx, env.Stdout, *only)
}

// checkedHooks are the mapping hooks the check knows how to exercise.
var checkedHooks = []runtime.Hook{runtime.MapRequest, runtime.MapResult, runtime.MapStream}

// hookCaller is what the check needs of a loaded plugin, so that its
// verdicts can be tested without building wasm.
type hookCaller interface {
	Has(runtime.Hook) bool
	Call(ctx context.Context, h runtime.Hook, in []byte) ([]byte, error)
}

// checker runs the samples through a plugin.
type checker struct {
	plugin hookCaller
	tenant string // "" is sent as such
	full   bool
}

// endpointReport is the outcome of one endpoint's samples.
type endpointReport struct {
	lines    []string // what was mapped, one line per call
	calls    int
	faults   int      // calls that faulted in the plugin (runtime.Fault)
	failures []string // every failed call, faults included
}

// run checks each endpoint (or only the one asked for) and prints the
// reports; the error sums up the failures.
func (c *checker) run(ctx context.Context, w io.Writer, only string) error {
	var served int
	var failures []string
	for _, ep := range checkSamples {
		if only != "" && ep.endpoint != only {
			continue
		}
		r := c.endpoint(ctx, ep)
		fmt.Fprintf(w, "\n%s\n", ep.endpoint)
		if only == "" && r.calls > 0 && r.faults == r.calls {
			fmt.Fprintf(w, "  not served: every call faulted, e.g. %s\n", r.failures[0])
			continue
		}
		served++
		for _, l := range r.lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
		for _, f := range r.failures {
			failures = append(failures, ep.endpoint+" "+f)
		}
	}
	switch {
	case len(failures) > 0:
		fmt.Fprintf(w, "\nFAILED: %d problem(s)\n", len(failures))
		return fmt.Errorf("plugin check failed:\n  %s", strings.Join(failures, "\n  "))
	case served == 0:
		return errors.New("plugin check failed: the plugin served no endpoint")
	}
	fmt.Fprintln(w, "\nok")
	return nil
}

// endpoint maps each sample of one endpoint through the exported hooks.
func (c *checker) endpoint(ctx context.Context, ep endpointSamples) *endpointReport {
	r := &endpointReport{}
	for _, s := range ep.samples {
		echo := c.request(ctx, r, ep.endpoint, s)
		var text string
		if c.plugin.Has(runtime.MapResult) {
			if s.stream && ep.endpoint == abi.EndpointResponses {
				c.result(ctx, r, ep.endpoint, s, echo, "in_progress")
			}
			text = c.result(ctx, r, ep.endpoint, s, echo, "completed")
		}
		if s.stream && c.plugin.Has(runtime.MapStream) {
			c.stream(ctx, r, ep.endpoint, s, text)
		}
	}
	if c.plugin.Has(runtime.MapRequest) {
		c.invalid(ctx, r, ep)
	}
	return r
}

// call runs one hook on in and judges the output with verdict. A failed
// call or a bad output is recorded, labelled with the sample and hook, and
// gives ok false; the caller describes a good one.
func (c *checker) call(ctx context.Context, r *endpointReport, label string, h runtime.Hook, in []byte, verdict func([]byte) error) (out []byte, ok bool) {
	r.calls++
	out, err := c.plugin.Call(ctx, h, in)
	if ie := (*runtime.InputError)(nil); errors.As(err, &ie) {
		err = fmt.Errorf("refused a valid sample as the client's fault: %w", err)
	} else if err == nil {
		err = verdict(out)
	}
	if err != nil {
		if f := (*runtime.Fault)(nil); errors.As(err, &f) {
			r.faults++
		}
		r.failures = append(r.failures, fmt.Sprintf("%s %s: %v", label, h, err))
		r.note(label, h, "FAILED: "+err.Error())
		return nil, false
	}
	return out, true
}

// note adds a line about one call.
func (r *endpointReport) note(label string, h runtime.Hook, what string) {
	r.lines = append(r.lines, fmt.Sprintf("%-11s %-12s %s", label, h, what))
}

// noteMapped adds the line about a good call: what, how out compares with
// the default mapping's output (nil when there is none) and, with --full,
// out itself.
func (c *checker) noteMapped(r *endpointReport, label string, h runtime.Hook, what string, out, def []byte) {
	if def != nil {
		what += "; " + versusDefault(out, def)
	}
	r.note(label, h, what)
	if c.full {
		r.lines = append(r.lines, "    "+string(out))
	}
}

// request maps a sample request when the plugin exports map_request, and
// returns the echo for map_result: the plugin's own, else the default
// mapping's, so that map_result is checked even when the plugin leaves
// requests to another plugin or its map_request failed.
func (c *checker) request(ctx context.Context, r *endpointReport, endpoint string, s checkSample) string {
	in := c.requestInput(endpoint, []byte(s.body))
	def, err := defaultRequest(in)
	echo := gjson.GetBytes(def, "echo").Raw
	if err != nil || echo == "" {
		def, echo = nil, "{}"
	}
	if !c.plugin.Has(runtime.MapRequest) {
		return echo
	}
	out, ok := c.call(ctx, r, s.name, runtime.MapRequest, in, func(out []byte) error {
		o, err := abi.DecodeRequestOutput(out)
		switch {
		case err != nil:
			return fmt.Errorf(`output is not a native request (want {"request":{"input":[…],…},"echo":…}): %w`, err)
		case s.structured && len(o.Request.OutputSchema) == 0:
			return errors.New("request has no output_schema: the client's JSON schema would be ignored")
		}
		return nil
	})
	if !ok {
		return echo
	}
	c.noteMapped(r, s.name, runtime.MapRequest, describeRequest(out), out, def)
	if e := gjson.GetBytes(out, "echo"); e.Exists() {
		return e.Raw
	}
	return "{}"
}

// result maps the sample's run result, with status "completed" or, for the
// response.created snapshot of a streamed response, "in_progress". It returns
// the assistant text of the reply.
func (c *checker) result(ctx context.Context, r *endpointReport, endpoint string, s checkSample, echo, status string) string {
	id, object, textPath := "chatcmpl-check", "chat.completion", "choices.0.message.content"
	if endpoint == abi.EndpointResponses {
		id, object, textPath = "resp_check", "response", "output.0.content.0.text"
	}
	rin := abi.ResultInput{Endpoint: endpoint, ID: id, MessageID: "msg_check", Created: 1700000000, Model: "service",
		Status: status, Echo: []byte(echo)}
	if status == abi.ResultCompleted {
		rin.Result = native.Result{Text: s.text, FinishReason: "stop",
			Usage: native.Usage{InputTokens: 12, OutputTokens: 9, TotalTokens: 21}}
	}
	in := rin.AppendJSON(nil)
	label := s.name
	if status != "completed" {
		label = "snapshot" // of the response.created event
	}
	out, ok := c.call(ctx, r, label, runtime.MapResult, in, func(out []byte) error {
		out, err := abi.NormalizeResult(out)
		switch {
		case err != nil:
			return err
		case gjson.GetBytes(out, "object").Str != object:
			return fmt.Errorf("output is not a %s object", object)
		case endpoint == abi.EndpointResponses && gjson.GetBytes(out, "status").Str != status:
			return fmt.Errorf("response status is not %q", status)
		}
		return nil
	})
	if !ok {
		return ""
	}
	def, _ := defaultResult(in)
	text := gjson.GetBytes(out, textPath)
	what := object + " " + clip(text.Str)
	if !text.Exists() {
		what = object + " without text"
	}
	c.noteMapped(r, label, runtime.MapResult, what, out, def)
	return text.Str
}

// stream feeds the sample's text to map_stream in small pieces, as the host
// does, carrying the held-back text over. When map_result mapped the same
// text to final (non-empty), the streamed total must equal it: clients see
// both, in the deltas and in the final reply or event.
func (c *checker) stream(ctx context.Context, r *endpointReport, endpoint string, s checkSample, final string) {
	pieces := streamPieces(s.text)
	var emits []string
	hold := ""
	for i, piece := range pieces {
		last := i == len(pieces)-1
		sin := abi.StreamInput{Endpoint: endpoint, ID: "check", TenantID: c.tenant, Text: hold + piece, Final: last}
		_, ok := c.call(ctx, r, s.name, runtime.MapStream, sin.AppendJSON(nil), func(out []byte) error {
			o, err := abi.DecodeStreamOutput(out)
			switch {
			case err != nil:
				return errors.New(`output is not {"emit":"…","hold":"…"}`)
			case last && o.Hold != "":
				return fmt.Errorf("the final call held back %q", o.Hold)
			}
			emits, hold = append(emits, o.Emit), o.Hold
			return nil
		})
		if !ok {
			return
		}
	}
	total := strings.Join(emits, "")
	if final != "" && total != final {
		r.failures = append(r.failures, fmt.Sprintf("%s %s: streamed %q but map_result gave %q", s.name, runtime.MapStream, total, final))
		r.note(s.name, runtime.MapStream, fmt.Sprintf("FAILED: streamed text differs from map_result's: %q", total))
		return
	}
	r.note(s.name, runtime.MapStream, fmt.Sprintf("%d pieces → %q", len(pieces), emits))
}

// invalid maps a body the client got wrong: a plugin should refuse it as the
// client's fault (HTTP 400). Accepting it is the plugin's choice; faulting
// would answer the client 500.
func (c *checker) invalid(ctx context.Context, r *endpointReport, ep endpointSamples) {
	in := c.requestInput(ep.endpoint, []byte(ep.invalid))
	r.calls++
	out, err := c.plugin.Call(ctx, runtime.MapRequest, in)
	var ie *runtime.InputError
	switch {
	case errors.As(err, &ie):
		r.note("invalid", runtime.MapRequest, fmt.Sprintf("client error %s (param %q): %s", ie.Code, ie.Param, ie.Message))
	case err != nil:
		if f := (*runtime.Fault)(nil); errors.As(err, &f) {
			r.faults++
		}
		r.failures = append(r.failures, fmt.Sprintf("invalid %s: %v (want a client error)", runtime.MapRequest, err))
		r.note("invalid", runtime.MapRequest, "FAILED: "+err.Error())
	default:
		c.noteMapped(r, "invalid", runtime.MapRequest, "accepted, no client error", out, nil)
	}
}

// streamPieces cuts text into pieces of a few bytes, the way a model
// streams tokens, so that words and addresses straddle the cuts.
func streamPieces(text string) []string {
	const size = 7
	var pieces []string
	for len(text) > size {
		cut := size
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		pieces, text = append(pieces, text[:cut]), text[cut:]
	}
	return append(pieces, text)
}

// checkSample is one sample request and the run's answer to it.
type checkSample struct {
	name       string
	body       string // the client's request body
	text       string // what the run answered
	stream     bool   // a streaming request: map_stream is exercised too
	structured bool   // asks for JSON output with a schema
}

// endpointSamples are one endpoint's samples.
type endpointSamples struct {
	endpoint string
	samples  []checkSample
	invalid  string // a body with a client mistake
}

// The answers mention an address and a phone number, so that a plugin
// which redacts them shows it.
const (
	checkSchema = `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`
	checkText   = "Hello! Mail jane.doe@example.com or call +1 555 123 4567."
	checkJSON   = `{"answer":"hello"}`
)

var checkSamples = []endpointSamples{
	{abi.EndpointChat, []checkSample{
		{name: "simple", body: `{"model":"service","messages":[{"role":"user","content":"Say hello."}]}`, text: checkText},
		{name: "streaming", stream: true, text: checkText, body: `{"model":"service","messages":[{"role":"system","content":"Be brief."},` +
			`{"role":"user","content":"Say hello."}],"stream":true,"stream_options":{"include_usage":true}}`},
		{name: "structured", structured: true, text: checkJSON, body: `{"model":"service","messages":[{"role":"user","content":"Say hello."}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"answer","strict":true,"schema":` + checkSchema + `}}}`},
	}, `{"model":"service"}`},
	{abi.EndpointResponses, []checkSample{
		{name: "simple", body: `{"model":"service","input":"Say hello."}`, text: checkText},
		{name: "streaming", stream: true, text: checkText, body: `{"model":"service","instructions":"Be brief.",` +
			`"input":[{"role":"user","content":"Say hello."}],"stream":true}`},
		{name: "structured", structured: true, text: checkJSON, body: `{"model":"service","input":"Say hello.",` +
			`"text":{"format":{"type":"json_schema","name":"answer","strict":true,"schema":` + checkSchema + `}}}`},
	}, `{"model":"service"}`},
}

// requestInput is the map_request input of a sample body, attributed to the
// check itself.
func (c *checker) requestInput(endpoint string, body []byte) []byte {
	in := abi.RequestInput{Endpoint: endpoint, TenantID: c.tenant,
		Actor: abi.Actor{ID: "check", Type: "service", Name: "runedge plugin check"}, Body: body}
	return in.AppendJSON(nil)
}
