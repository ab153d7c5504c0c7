package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/runedge/runedge/host/server"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// openStore opens the store of the configuration at cfgPath (the default
// configuration without one), or the SQLite file db when given.
func openStore(ctx context.Context, cfgPath, db string, env Env) (runner.Store, error) {
	cfg, err := loadConfig(cfgPath, env)
	if err != nil {
		return nil, err
	}
	if db != "" {
		cfg.Store.Driver, cfg.Store.Path = "sqlite", db
	}
	return server.OpenStore(ctx, cfg, nil)
}

// recoverHost marks the unfinished runs of a host that will not come back
// failed/interrupted, as that host's own start-up would. Run it only for a
// host that is down: its live runs would be marked too.
func recoverHost(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("runs recover", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "configuration file whose store to use")
	db := fs.String("db", "", "SQLite file (overrides the configuration's)")
	host := fs.String("host", "", "id of the host whose runs to recover (host.id; required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *host == "" {
		return fmt.Errorf("runs recover: --host is required (the id of a host that is down)")
	}
	st, err := openStore(ctx, *cfgPath, *db, env)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.MarkInterrupted(ctx, *host, time.Now().Unix())
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%d runs of host %s marked failed/interrupted\n", n, *host)
	return nil
}

// runs prints recent runs from the store as a table. It reads the store
// directly: the SQLite file (WAL lets it do so while a server writes) or
// the fleet's PostgreSQL. `runs recover --host ID` is recoverHost.
func runs(ctx context.Context, args []string, env Env) error {
	if len(args) > 0 && args[0] == "recover" {
		return recoverHost(ctx, args[1:], env)
	}
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "configuration file whose store to read")
	db := fs.String("db", "", "SQLite file to read (overrides the configuration's)")
	p := contract.RunsPaging
	limit := fs.Int("limit", p.Default, fmt.Sprintf("how many runs (1-%d)", p.Max))
	tenant := fs.String("tenant", "", "only runs of this tenant")
	status := fs.String("status", "", "only runs in this state")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *limit < 1 || *limit > p.Max {
		return fmt.Errorf("--limit must be from 1 to %d", p.Max)
	}
	if *status != "" && !runner.Status(*status).Valid() {
		return fmt.Errorf("--status: unknown state %q", *status)
	}
	st, err := openStore(ctx, *cfgPath, *db, env)
	if err != nil {
		return err
	}
	defer st.Close()
	list, _, err := st.ListRuns(ctx, runner.ListQuery{TenantID: *tenant, Status: runner.Status(*status), Limit: *limit})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tREASON\tENDPOINT\tTENANT\tACTOR\tSESSION\tHOST\tCREATED\tDURATION\tTTFT\tTOKENS\tTRACE")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, dash(r.StatusReason),
			r.Endpoint, r.TenantID, r.Actor.ID, r.SessionID, dash(r.HostID),
			time.Unix(r.CreatedAt, 0).UTC().Format(time.DateTime), millis(r.DurationMs), millis(r.TimeToFirstTokenMs), tokens(r), dash(r.TraceID))
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
