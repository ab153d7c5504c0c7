package schema

import "testing"

// BenchmarkValidate is a typical structured answer validated against its
// schema: the budget's walk is part of every structured run's cost.
func BenchmarkValidate(b *testing.B) {
	s, err := Check([]byte(`{"type":"object","required":["city","days"],"properties":{"city":{"type":"string"},"days":{"type":"array","items":{"type":"object","required":["date","high"],"properties":{"date":{"type":"string","format":"date"},"high":{"type":"number"}}}}}}`))
	if err != nil {
		b.Fatal(err)
	}
	doc := []byte(`{"city":"Paris","days":[{"date":"2026-11-26","high":9.5},{"date":"2026-11-27","high":11},{"date":"2026-11-28","high":7.25}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(doc); err != nil {
			b.Fatal(err)
		}
	}
}
