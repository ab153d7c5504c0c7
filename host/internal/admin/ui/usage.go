package ui

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// usagePoint is one tenant's spending in one bucket, as the usage chart
// draws it.
type usagePoint struct {
	Start  int64   `json:"start"`
	Tenant string  `json:"tenant"`
	Tokens int64   `json:"tokens"`
	Cost   float64 `json:"cost"`
	Runs   int64   `json:"runs"`
}

// getUsage answers GET /ui/api/usage?bucket=hour|day: every tenant's
// tokens and cost per bucket over the last 48 hours (hour) or 30 days
// (day), summed by the store.
func (u *UI) getUsage(w http.ResponseWriter, r *http.Request) {
	bucket := r.URL.Query().Get("bucket")
	span := 48 * time.Hour
	switch bucket {
	case "", runner.BucketHour:
		bucket = runner.BucketHour
	case runner.BucketDay:
		span = 30 * 24 * time.Hour
	default:
		writeError(w, apierr.InvalidBody("bucket", "bucket is hour or day, got %q", bucket))
		return
	}
	now := time.Now()
	q := runner.UsageQuery{From: now.Add(-span).Unix(), To: now.Unix() + 1, ByTenant: true, Bucket: bucket, Limit: runner.MaxUsageRows}
	page, err := u.cfg.Backend.Usage(r.Context(), q)
	if err != nil {
		u.fail(w, err)
		return
	}
	pts := make([]usagePoint, 0, len(page.Rows))
	for _, row := range page.Rows {
		pts = append(pts, usagePoint{Start: row.Start, Tenant: row.TenantID, Tokens: row.InputTokens + row.OutputTokens,
			Cost: float64(row.CostNanos) / 1e9, Runs: row.Runs})
	}
	writeJSON(w, map[string]any{"bucket": bucket, "from": q.From, "to": q.To, "points": pts, "has_more": page.HasMore})
}

// budgetView is a budget as the page lists it.
type budgetView struct {
	Name   string  `json:"name"`
	Tenant string  `json:"tenant"`
	Scope  string  `json:"scope"` // "tenant", "token NAME", "actor ID"
	Window string  `json:"window"`
	Unit   string  `json:"unit"`
	Used   float64 `json:"used"`
	Limit  float64 `json:"limit"`
	Left   float64 `json:"left"`
	Share  float64 `json:"share"` // used / limit
	Reset  int64   `json:"reset"`
}

// getBudgets answers GET /ui/api/budgets: every budget with what it has
// used and left, the nearest their limits first.
func (u *UI) getBudgets(w http.ResponseWriter, r *http.Request) {
	left, err := u.cfg.Backend.Budgets(r.Context())
	if err != nil {
		u.fail(w, err)
		return
	}
	out := make([]budgetView, 0, len(left))
	for _, l := range left {
		scale := 1.0
		if l.Unit == "cost" {
			scale = 1e-9
		}
		v := budgetView{Name: l.Rule.Name, Tenant: l.Rule.Tenant, Scope: "tenant", Window: l.Rule.Window, Unit: l.Unit,
			Used: float64(l.Used) * scale, Limit: float64(l.Limit) * scale, Left: float64(max(0, l.Limit-l.Used)) * scale,
			Share: float64(l.Used) / float64(l.Limit), Reset: l.Reset.Unix()}
		switch {
		case l.Rule.Token != "":
			v.Scope = "token " + l.Rule.Token
		case l.Rule.Actor != "":
			v.Scope = "actor " + l.Rule.Actor
		}
		if v.Window == "" {
			v.Window = "rolling " + strconv.FormatInt(int64(l.Rule.Every/time.Second), 10) + "s"
		}
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(a, b budgetView) int {
		switch {
		case a.Share > b.Share:
			return -1
		case a.Share < b.Share:
			return 1
		}
		return 0
	})
	writeJSON(w, map[string]any{"budgets": out})
}
