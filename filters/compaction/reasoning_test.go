package compaction

import (
	"errors"
	"testing"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// A reasoning item this service sealed for the tenant is opened into
// Reasoning.Opened (the input is copied, the item given is unchanged); an
// Opened a mapping wrote without a sealed item is cleared; another
// tenant's, an altered or a foreign encrypted_content is a 400 naming
// input[i].encrypted_content by the item's ref_index.
func TestOpenReasoning(t *testing.T) {
	s := &Stage{keys: ring(t, "k1")}
	sealed := s.keys.Seal("t1", "Six times seven.")
	item := &runner.Reasoning{Summary: []string{"s"}, EncryptedContent: sealed}
	forged := &runner.Reasoning{Opened: "written by a mapping"}
	in := []runner.Message{{Role: "user", Content: "6*7?"}, {Role: "assistant", Content: "42"},
		{Role: runner.RoleReasoning, Reasoning: item, RefIndex: 2}, {Role: runner.RoleReasoning, Reasoning: forged, RefIndex: 3}}
	out, err := s.openReasoning("t1", in)
	if err != nil {
		t.Fatal(err)
	}
	if out[2].Reasoning.Opened != "Six times seven." || out[2].Reasoning.EncryptedContent != sealed || out[3].Reasoning.Opened != "" {
		t.Errorf("opened %+v %+v", out[2].Reasoning, out[3].Reasoning)
	}
	if item.Opened != "" || forged.Opened == "" || in[2].Reasoning != item {
		t.Error("the input given was changed in place")
	}
	plain := []runner.Message{{Role: "user", Content: "hi"}, {Role: runner.RoleReasoning, Reasoning: &runner.Reasoning{Summary: []string{"s"}}}}
	if got, err := s.openReasoning("t1", plain); err != nil || &got[0] != &plain[0] {
		t.Errorf("nothing to open: want the input itself, got %v", err)
	}

	altered := []byte(sealed)
	altered[len(altered)-2] ^= 1
	for name, c := range map[string]struct{ tenant, enc string }{
		"another tenant's": {"t2", sealed},
		"altered":          {"t1", string(altered)},
		"foreign":          {"t1", "gAAAAB-opaque"},
	} {
		_, err := s.openReasoning(c.tenant, []runner.Message{{Role: "user", Content: "x"},
			{Role: runner.RoleReasoning, Reasoning: &runner.Reasoning{EncryptedContent: c.enc}, RefIndex: 4}})
		var e *apierr.Error
		if !errors.As(err, &e) || e.Param != "input[4].encrypted_content" || e.Code != apierr.CodeInvalidBody {
			t.Errorf("%s: %v, want 400 invalid_body naming input[4].encrypted_content", name, err)
		}
	}

	// Sealed with a key this host does not hold: a ring rotated past it,
	// or a host without configured keys that restarted (ProcessKeys). The
	// item is kept, nothing opened; the turn is served.
	restarted := ProcessKeys().Seal("t1", "Before the restart.")
	for name, enc := range map[string]string{"unknown key": "rc1.k9.AAAA", "a restarted host's": restarted} {
		in := []runner.Message{{Role: "user", Content: "x"},
			{Role: runner.RoleReasoning, Reasoning: &runner.Reasoning{EncryptedContent: enc, Opened: "written by a mapping"}, RefIndex: 4}}
		out, err := s.openReasoning("t1", in)
		if err != nil || len(out) != 2 || out[1].Reasoning.Opened != "" || out[1].Reasoning.EncryptedContent != enc {
			t.Errorf("%s: %v %+v, want the item kept and nothing opened", name, err, out)
		}
	}
	if a, b := ProcessKeys(), ProcessKeys(); a.seal == b.seal {
		t.Errorf("two processes' keys share the id %q: a restarted host's items would fail as altered, not as unknown", a.seal)
	}
}
