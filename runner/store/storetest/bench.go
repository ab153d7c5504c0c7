package storetest

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/runner"
)

// The drivers' benchmarks report cpu-ns/op, the process's CPU per
// operation: on a shared machine it is steadier than the wall time, and it
// counts what the group commit's batching saves.

// benchRequest is the request a benchmark run records.
var benchRequest = []byte(`{"input":[{"role":"user","content":"hello"}],"stream":false}`)

// BenchRun is a running run in session and thread, as a request starts it:
// under a lease (runner/lease.go), counted from its write (Run.LeaseFor).
func BenchRun(session, thread string) *runner.Run {
	started := int64(1_700_000_000)
	return &runner.Run{
		ID: runner.NewID("run_"), Status: runner.StatusRunning, SessionID: session, ThreadID: thread,
		Actor: runner.Actor{ID: "svc", Type: "service"}, TenantID: "acme", Endpoint: "/v1/chat/completions",
		Model: "service", CreatedAt: started, StartedAt: &started, Request: benchRequest,
		LeaseToken: 1, LeaseExpiresAt: started*1000 + 10_000, LeaseFor: 10 * time.Second,
	}
}

// BenchOwnRun is a running run that opens its own session and thread, as
// the service starts a request that names neither (every chat completion
// without a session header): their ids are the run's, and StartRun checks
// neither.
func BenchOwnRun() *runner.Run {
	r := BenchRun("", "")
	r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
	return r
}

// CreateAndFinish makes a run's two writes, as a request does: r's row
// before the agent starts (opening what newSession and newThread say) and
// its terminal state, fenced by its lease.
func CreateAndFinish(b *testing.B, s runner.Store, r *runner.Run, newSession, newThread bool) {
	if err := s.StartRun(b.Context(), r, newSession, newThread); err != nil {
		b.Error(err)
		return
	}
	ended := r.CreatedAt + 1
	if err := s.Transition(b.Context(), r.ID, runner.Transition{
		Status: runner.StatusCompleted, EndedAt: &ended, Output: "You said: hello",
		Usage: &runner.Usage{InputTokens: 1, OutputTokens: 3, TotalTokens: 4}, Lease: r.LeaseToken,
		Ledger: &runner.UsageEntry{RunID: r.ID, TenantID: r.TenantID, ActorID: r.Actor.ID, Token: "app", Model: "offline", At: ended, InputTokens: 1, OutputTokens: 3},
	}); err != nil {
		b.Error(err)
	}
}

// BenchSequentially runs op once per iteration, one at a time, and
// reports cpu-ns/op.
func BenchSequentially(b *testing.B, op func()) {
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchConcurrently runs op from 8 goroutines per P at once (16 on two
// cores), so that the group commit batches their writes as under load,
// and reports cpu-ns/op.
func BenchConcurrently(b *testing.B, op func()) {
	b.ReportAllocs()
	b.SetParallelism(8)
	var n atomic.Int64
	cpu0 := cputime.Process()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			op()
			n.Add(1)
		}
	})
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(n.Load()), "cpu-ns/op")
}

// BenchSamePrefix is a run's two writes whose recorded request (20 KB,
// its messages' ends given) is one prior earlier runs of the tenant
// recorded too: a client's retries, a job that sends the same document
// each time, or a benchmark's fixed body. The lookup of the request's
// base must not read every one of them: cpu-ns/op at prior=1000 is that
// at prior=10 when it does not.
func BenchSamePrefix(b *testing.B, s runner.Store) {
	var req []byte
	var bounds []int
	req = append(req, `{"input":[`...)
	for i := 0; len(req) < 20<<10; i++ {
		if i > 0 {
			req = append(req, ',')
		}
		req = append(req, `{"role":"system","content":"Answer in the house style; cite the handbook's section for every rule you apply. "}`...)
		bounds = append(bounds, len(req))
	}
	turn := func(last string) *runner.Run {
		r := BenchOwnRun()
		q := append(append([]byte{}, req...), `,{"role":"user","content":"`+last+`"}`...)
		r.RequestBounds = append(bounds[:len(bounds):len(bounds)], len(q))
		r.Request = append(q, `],"stream":false}`...)
		return r
	}
	for _, prior := range []int{10, 1000} {
		b.Run("prior="+strconv.Itoa(prior), func(b *testing.B) {
			same := "the same question, asked from " + b.Name()
			for range prior {
				CreateAndFinish(b, s, turn(same), false, false)
			}
			BenchSequentially(b, func() { CreateAndFinish(b, s, turn(same), false, false) })
		})
	}
}
