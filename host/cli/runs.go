package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// runs prints recent runs from the store as a table. It reads the SQLite
// file directly (WAL lets it do so while a server writes).
func runs(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "configuration file whose store to read")
	db := fs.String("db", "", "SQLite file to read (overrides the configuration's)")
	limit := fs.Int("limit", 20, "how many runs (1-100)")
	tenant := fs.String("tenant", "", "only runs of this tenant")
	status := fs.String("status", "", "only runs in this state")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 100 {
		return fmt.Errorf("--limit must be from 1 to 100")
	}
	if *status != "" && !runner.Status(*status).Valid() {
		return fmt.Errorf("--status: unknown state %q", *status)
	}
	path := *db
	if path == "" {
		cfg, err := loadConfig(*cfgPath)
		if err != nil {
			return err
		}
		path = cfg.Path(cfg.Store.Path)
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	list, _, err := st.ListRuns(ctx, runner.ListQuery{TenantID: *tenant, Status: runner.Status(*status), Limit: *limit})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tREASON\tENDPOINT\tTENANT\tACTOR\tSESSION\tCREATED\tDURATION\tTTFT\tTOKENS")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, dash(r.StatusReason),
			r.Endpoint, r.TenantID, r.Actor.ID, r.SessionID,
			time.Unix(r.CreatedAt, 0).UTC().Format(time.DateTime), millis(r.DurationMs), millis(r.TimeToFirstTokenMs), tokens(r))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// millis shows a recorded timing (duration_ms, time_to_first_token_ms)
// as a Go duration, "-" when it was not recorded.
func millis(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return (time.Duration(*ms) * time.Millisecond).String()
}

func tokens(r runner.Run) string {
	if r.Usage == nil {
		return "-"
	}
	return fmt.Sprint(r.Usage.TotalTokens)
}
