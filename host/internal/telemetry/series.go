package telemetry

import (
	"sync"
	"sync/atomic"
)

// labels are a series' label values, in the vector's order; unused ones
// are "".
type labels [4]string

// series keeps a vector's children (its counters, histograms) by their
// label values. prometheus's WithLabelValues hashes and checks every value
// and takes the vector's lock on each call, about 300 ns for three labels,
// and a request made nine such calls; here a request reads one map that
// only a series seen for the first time replaces. The label values are
// bounded already (metrics.go: endpoints, statuses, reasons, configured
// tenants), so the map is too, and a child once made is never deleted
// from a vector here.
type series[V any] struct {
	with func(...string) V // the vector's WithLabelValues
	n    int               // how many labels the vector has
	m    atomic.Pointer[map[labels]V]
	mu   sync.Mutex // held by add
}

func newSeries[V any](n int, with func(...string) V) *series[V] {
	s := &series[V]{with: with, n: n}
	s.m.Store(&map[labels]V{})
	return s
}

// of is the child of the label values l.
func (s *series[V]) of(l labels) V {
	if v, ok := (*s.m.Load())[l]; ok {
		return v
	}
	return s.add(l)
}

// add makes the child of l and a map that holds it.
func (s *series[V]) add(l labels) V {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.m.Load()
	if v, ok := old[l]; ok {
		return v
	}
	v := s.with(l[:s.n]...)
	next := make(map[labels]V, len(old)+1)
	for k, c := range old {
		next[k] = c
	}
	next[l] = v
	s.m.Store(&next)
	return v
}
