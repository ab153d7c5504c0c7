package config

import (
	"time"

	"github.com/runedge/runedge/runner"
)

// Runs configures how runs outlive their hosts (runner/lease.go,
// docs/operations.md "Leases and takeover"): every running run is held
// under a lease its host renews; when a lease runs out another host (or
// this one at its next start) takes the run over.
type Runs struct {
	// Lease is how long a run's lease holds without a renewal: a dead
	// host's runs are taken over within Lease + LeaseRenew.
	Lease Duration `yaml:"lease"`
	// LeaseRenew is how often a host renews all its leases (one store
	// statement each time).
	LeaseRenew Duration `yaml:"lease_renew"`
	// MaxDrives bounds how many times a background run is driven, its
	// first drive included; past it a run taken over fails (max_drives).
	MaxDrives int `yaml:"max_drives"`
}

func (r *Runs) applyDefaults() {
	if r.Lease == (Duration{}) {
		r.Lease = Dur(runner.DefaultLease)
	}
	if r.LeaseRenew == (Duration{}) {
		r.LeaseRenew = Dur(min(runner.DefaultLeaseRenew, r.Lease.Std()/3))
	}
	if r.MaxDrives == 0 {
		r.MaxDrives = runner.DefaultMaxDrives
	}
}

func (r *Runs) validate(bad func(field, format string, args ...any)) {
	lease, renew := r.Lease.Std(), r.LeaseRenew.Std()
	if lease < time.Second || lease > 10*time.Minute {
		bad("runs.lease", "want 1s to 10m, got %s", lease)
	}
	if renew <= 0 || renew > lease/2 {
		bad("runs.lease_renew", "want more than 0 and at most half of runs.lease (%s), got %s", lease, renew)
	}
	if r.MaxDrives < 1 || r.MaxDrives > 100 {
		bad("runs.max_drives", "want 1 to 100, got %d", r.MaxDrives)
	}
}
