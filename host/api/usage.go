package api

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// GET /runner/v1/usage sums the usage ledger (docs/api.md "Usage"): a
// tenant's token sees its tenant, an admin token every tenant.

// UsageRow is one row of a usage answer. The keys not grouped by are null.
type UsageRow struct {
	Object          string  `json:"object"` // "usage"
	StartTime       int64   `json:"start_time"`
	EndTime         int64   `json:"end_time"`
	TenantID        *string `json:"tenant_id"`
	ActorID         *string `json:"actor_id"`
	Token           *string `json:"token"`
	Runs            int64   `json:"runs"`
	InputTokens     int64   `json:"input_tokens"`
	CachedTokens    int64   `json:"cached_tokens"`
	OutputTokens    int64   `json:"output_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens"`
	TotalTokens     int64   `json:"total_tokens"`
	// Cost is in the configured prices' currency unit (0 when unpriced).
	Cost float64 `json:"cost"`
}

// UsageList is the answer: OpenAI's list shape.
type UsageList struct {
	Object  string     `json:"object"` // "list"
	Data    []UsageRow `json:"data"`
	HasMore bool       `json:"has_more"`
}

// defaultUsageRange is the range of a request that names no from.
const defaultUsageRange = 30 * 24 * time.Hour

// ParseUsageQuery reads from, to, group_by, bucket, tenant_id and limit.
func ParseUsageQuery(q map[string][]string, now time.Time) (runner.UsageQuery, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	uq := runner.UsageQuery{To: now.Unix() + 1, TenantID: get("tenant_id"), Limit: 1000}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"to", &uq.To}, {"from", &uq.From}} {
		if v := get(f.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return uq, apierr.InvalidBody(f.name, "%s must be a Unix time in seconds", f.name)
			}
			*f.dst = n
		}
	}
	if get("from") == "" {
		uq.From = max(0, uq.To-int64(defaultUsageRange/time.Second))
	}
	if uq.From >= uq.To {
		return uq, apierr.InvalidBody("from", "from must be before to")
	}
	if v := get("group_by"); v != "" {
		for _, k := range strings.Split(v, ",") {
			switch strings.TrimSpace(k) {
			case "tenant":
				uq.ByTenant = true
			case "actor":
				uq.ByActor = true
			case "token":
				uq.ByToken = true
			default:
				return uq, apierr.InvalidBody("group_by", "group_by takes tenant, actor and token, got %q", k)
			}
		}
	}
	switch b := get("bucket"); b {
	case runner.BucketNone, runner.BucketHour, runner.BucketDay, runner.BucketMonth:
		uq.Bucket = b
	default:
		return uq, apierr.InvalidBody("bucket", "bucket is hour, day or month, got %q", b)
	}
	if v := get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > runner.MaxUsageRows {
			return uq, apierr.InvalidBody("limit", "limit must be 1 to %d", runner.MaxUsageRows)
		}
		uq.Limit = n
	}
	return uq, nil
}

// Usage answers GET /runner/v1/usage.
func (hs *Handlers) Usage(ctx context.Context, x *filters.Exchange) error {
	uq, err := ParseUsageQuery(x.Request.URL.Query(), time.Now())
	if err != nil {
		return err
	}
	sc := scope(x)
	if !sc.Admin && uq.TenantID != "" && uq.TenantID != sc.TenantID {
		// Another tenant's usage is invisible: the filter matches nothing.
		return WriteJSON(x, UsageList{Object: "list", Data: []UsageRow{}})
	}
	page, err := hs.Runs.Usage(ctx, sc, uq)
	if err != nil {
		return err
	}
	return WriteJSON(x, UsageView(uq, page))
}

// UsageView is page as the API answers it.
func UsageView(uq runner.UsageQuery, page runner.UsagePage) UsageList {
	out := UsageList{Object: "list", Data: make([]UsageRow, 0, len(page.Rows)), HasMore: page.HasMore}
	for _, r := range page.Rows {
		v := UsageRow{Object: "usage", StartTime: r.Start, EndTime: bucketEnd(uq, r.Start), Runs: r.Runs,
			InputTokens: r.InputTokens, CachedTokens: r.CachedTokens, OutputTokens: r.OutputTokens,
			ReasoningTokens: r.ReasoningTokens, TotalTokens: r.InputTokens + r.OutputTokens,
			Cost: float64(r.CostNanos) / 1e9}
		if uq.ByTenant {
			v.TenantID = &r.TenantID
		}
		if uq.ByActor {
			v.ActorID = &r.ActorID
		}
		if uq.ByToken {
			v.Token = &r.Token
		}
		if v.StartTime < uq.From {
			v.StartTime = uq.From
		}
		out.Data = append(out.Data, v)
	}
	return out
}

// bucketEnd is the end of the bucket that starts at start, within the
// query's range.
func bucketEnd(uq runner.UsageQuery, start int64) int64 {
	end := uq.To
	switch uq.Bucket {
	case runner.BucketHour:
		end = start + 3600
	case runner.BucketDay:
		end = start + 86400
	case runner.BucketMonth:
		end = time.Unix(start, 0).UTC().AddDate(0, 1, 0).Unix()
	}
	return min(end, uq.To)
}
