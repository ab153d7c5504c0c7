package sqlite_test

import (
	"testing"

	"github.com/runedge/runedge/runner"
)

// BenchmarkAppendEvents measures one stored batch of a background
// response's stream (16 events): the write the event log makes every
// batch, fenced by the run's lease token as a leased run's are.
func BenchmarkAppendEvents(b *testing.B) {
	s := openTemp(b)
	ctx := b.Context()
	r := benchRun("sess_e", "thread_e")
	r.LeaseToken, r.LeaseExpiresAt = 1, 1<<50
	if err := s.StartRun(ctx, r, true, true); err != nil {
		b.Fatal(err)
	}
	if err := s.BeginResponse(ctx, runner.ResponseRecord{RunID: r.ID, TenantID: r.TenantID}, nil); err != nil {
		b.Fatal(err)
	}
	batch := make([]runner.StoredEvent, 16)
	for i := range batch {
		batch[i] = runner.StoredEvent{Name: "response.output_text.delta", Data: []byte(`{"type":"response.output_text.delta","delta":"word "}`)}
	}
	seq := 0
	b.ReportAllocs()
	for b.Loop() {
		for i := range batch {
			batch[i].Seq = seq + i
		}
		seq += len(batch)
		if err := s.AppendEvents(ctx, r.ID, r.LeaseToken, batch); err != nil {
			b.Fatal(err)
		}
	}
}
