package telemetry

import (
	"fmt"
	"math/rand/v2"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/host/config"
)

// samplerOf is the sampler of tc. A request without a traceparent starts
// a trace sampled at sample_ratio; spans inside runedge follow their
// parent. A caller's traceparent is continued (its trace id, its span as
// the parent), but whether it is sampled is the caller's decision only
// with trust_traceparent: otherwise the ratio decides, by a draw of its
// own, since the trace id is the caller's to choose and a ratio sampler
// that reads it could be steered.
func samplerOf(tc config.Tracing) sdktrace.Sampler {
	root := sdktrace.TraceIDRatioBased(tc.Ratio())
	if tc.Trusted() {
		return sdktrace.ParentBased(root)
	}
	caller := callerRatio(tc.Ratio())
	return sdktrace.ParentBased(root,
		sdktrace.WithRemoteParentSampled(caller),
		sdktrace.WithRemoteParentNotSampled(caller))
}

// callerRatio samples that share of the traces a caller started, whatever
// their flags and ids say.
type callerRatio float64

func (r callerRatio) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	d := sdktrace.Drop
	if r >= 1 || (r > 0 && rand.Float64() < float64(r)) {
		d = sdktrace.RecordAndSample
	}
	return sdktrace.SamplingResult{Decision: d, Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState()}
}

func (r callerRatio) Description() string { return fmt.Sprintf("CallerRatio{%g}", float64(r)) }
