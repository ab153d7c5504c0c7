package apierr

import (
	"fmt"
	"testing"
)

// Every runner outcome is sent with the status and type of its code's one
// row in the catalog: the map from outcomes to HTTP names codes only.
func TestOutcomesTakeTheCatalogsStatusAndType(t *testing.T) {
	rows := map[string][]Entry{}
	for _, e := range Catalog {
		rows[e.Code] = append(rows[e.Code], e)
	}
	for _, o := range outcomes {
		rs := rows[o.code]
		if len(rs) != 1 {
			t.Errorf("outcome %v: code %q has %d catalog rows, want 1 (its status would be ambiguous)", o.err, o.code, len(rs))
			continue
		}
		e := FromRunner(fmt.Errorf("wrapped: %w", o.err))
		if e == nil {
			t.Errorf("outcome %v: FromRunner found no row", o.err)
			continue
		}
		if e.Status != rs[0].Status || e.Type != rs[0].Type || e.Code != o.code {
			t.Errorf("outcome %v: sent as %d %s/%s, catalog says %d %s/%s", o.err, e.Status, e.Type, e.Code, rs[0].Status, rs[0].Type, rs[0].Code)
		}
	}
}
