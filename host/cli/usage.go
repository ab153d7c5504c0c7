package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/runner"
)

// usageCmd prints the usage ledger summed, as GET /runner/v1/usage answers
// an admin token, as a table. Like runs, it reads the store directly.
func usageCmd(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "configuration file whose store to read")
	db := fs.String("db", "", "SQLite file to read (overrides the configuration's)")
	from := fs.String("from", "", "start: Unix seconds or YYYY-MM-DD (default: 30 days ago)")
	to := fs.String("to", "", "end, excluded: Unix seconds or YYYY-MM-DD (default: now)")
	groupBy := fs.String("group-by", "tenant", "any of tenant, actor, token, comma-separated")
	bucket := fs.String("bucket", "day", "hour, day, month, or none")
	tenant := fs.String("tenant", "", "only this tenant")
	limit := fs.Int("limit", 1000, "rows (1-10000)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	q := map[string][]string{"group_by": {*groupBy}, "tenant_id": {*tenant}, "limit": {strconv.Itoa(*limit)}}
	if *bucket != "none" {
		q["bucket"] = []string{*bucket}
	}
	for name, v := range map[string]string{"from": *from, "to": *to} {
		if v == "" {
			continue
		}
		if d, err := time.Parse(time.DateOnly, v); err == nil {
			v = strconv.FormatInt(d.Unix(), 10)
		}
		q[name] = []string{v}
	}
	uq, err := api.ParseUsageQuery(q, time.Now())
	if err != nil {
		return errors.New(err.Error())
	}
	st, err := openStore(ctx, *cfgPath, *db, env)
	if err != nil {
		return err
	}
	defer st.Close()
	us, ok := st.(runner.UsageStore)
	if !ok {
		return errors.New("the store keeps no usage ledger")
	}
	rows, err := us.SumUsage(ctx, uq)
	if err != nil {
		return err
	}
	more := len(rows) > uq.Limit
	if more {
		rows = rows[:uq.Limit]
	}
	view := api.UsageView(uq, runner.UsagePage{Rows: rows, HasMore: more})
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "START\tTENANT\tACTOR\tTOKEN\tRUNS\tINPUT\tCACHED\tOUTPUT\tREASONING\tTOTAL\tCOST\t")
	for _, r := range view.Data {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.6f\t\n", startOf(uq.Bucket, r.StartTime),
			all(r.TenantID), all(r.ActorID), all(r.Token), r.Runs, r.InputTokens, r.CachedTokens,
			r.OutputTokens, r.ReasoningTokens, r.TotalTokens, r.Cost)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more {
		fmt.Fprintf(env.Stdout, "(more rows: raise --limit or narrow the range)\n")
	}
	return nil
}

// all shows a key that was not grouped by.
func all(s *string) string {
	if s == nil {
		return "*"
	}
	return dash(*s)
}

func startOf(bucket string, t int64) string {
	u := time.Unix(t, 0).UTC()
	switch bucket {
	case runner.BucketMonth:
		return u.Format("2006-01")
	case runner.BucketDay:
		return u.Format(time.DateOnly)
	}
	return u.Format("2006-01-02 15:04")
}
