package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// The statements every run writes (its insert, its transitions) and the
// ends of the writer's transactions run straight through the driver:
// prepared on the writer connection with (*sql.Conn).Raw and executed
// with driver.StmtExecContext, not through a *sql.Stmt. database/sql
// copies a statement's arguments into a new []driver.NamedValue on every
// call (1.2 KB for an insert's 28), converts each, and wraps the driver's
// result; here the arguments go into a slice the writer reuses (it runs
// one statement at a time, under wtx.mu). The other writer statements
// (the response history's, rare ones) keep database/sql.

// rawStmt is a statement prepared on the writer's driver connection.
type rawStmt struct{ ds driver.Stmt }

// prepareRaw compiles query on the writer connection c.
func prepareRaw(ctx context.Context, c *sql.Conn, query string) (*rawStmt, error) {
	var st rawStmt
	err := c.Raw(func(dc any) error {
		p, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return errors.New("the driver cannot prepare with a context")
		}
		ds, err := p.PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		if _, ok := ds.(driver.StmtExecContext); !ok {
			ds.Close()
			return errors.New("the driver's statements cannot execute with a context")
		}
		st.ds = ds
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: prepare %.40q: %w", query, err)
	}
	return &st, nil
}

// close finalizes the statement on c.
func (s *rawStmt) close(c *sql.Conn) error {
	return c.Raw(func(any) error { return s.ds.Close() })
}

// exec runs st with args inside the writer's transaction. Its caller
// holds t.mu.
func (t *wtx) exec(ctx context.Context, st *rawStmt, args ...any) (res driver.Result, err error) {
	nv := t.nv[:0]
	for i, a := range args {
		v, err := driverValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	t.nv = nv
	defer clear(nv) // keeps no argument alive
	err = t.c.Raw(func(any) error {
		res, err = st.ds.(driver.StmtExecContext).ExecContext(ctx, nv)
		return err
	})
	return res, err
}

// driverValue converts an argument as database/sql does
// (driver.DefaultParameterConverter), without its reflection for the
// types the store passes.
func driverValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, string, int64, []byte, bool, float64, time.Time:
		return v, nil
	case int:
		return int64(v), nil
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}
