package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// checkpointer copies the WAL back into the database file on its own
// connection, on a timer. With SQLite's automatic checkpoint the commit
// that crosses 1000 WAL pages does the copy (and its fsyncs) itself, which
// put checkpoints in the request path's p99. A PASSIVE checkpoint never
// waits for the writer or readers, so running it aside costs requests
// nothing but CPU.
//
// A PASSIVE checkpoint alone never lets the WAL start over under steady
// writes: it copies the frames that were there when it began, while the
// writer appends more, so it never ends with the whole log copied, and
// SQLite restarts the log only then. The WAL grew by about 40 MB a second
// under bench-edge's load (344 MB after 9 s), every frame extending the
// file. So after each of its checkpoints of a log over tailFrames, the
// checkpointer asks the writer (after) to copy the few frames appended
// meanwhile, on its own connection between two batches, when nothing can
// append: the log is then wholly copied, and the writer's next
// transaction starts it over from the beginning (wtx.begin).
type checkpointer struct {
	db     *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
	after  func() // called after each periodic checkpoint of a log over tailFrames
	before func() // called before each periodic checkpoint
}

func startCheckpointer(path string, every time.Duration, before, after func()) (*checkpointer, error) {
	if every <= 0 {
		every = time.Second
	}
	q := url.Values{"_pragma": {"busy_timeout(10000)"}}
	// Its syncs give up the goroutine's P for the call (walvfs.go's
	// dbSync); its VFS is not the writer's, whose ways with the WAL
	// index's locks are the writer's alone (walShmLock).
	if v := checkpointVFS(); v != "" {
		q.Set("vfs", v)
	}
	db, err := openDB(path, q)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, cancel: cancel, done: make(chan struct{}), before: before, after: after}
	go c.loop(ctx, every)
	return c, nil
}

func (c *checkpointer) loop(ctx context.Context, every time.Duration) {
	defer close(c.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if c.before != nil {
				c.before()
			}
			if frames, err := c.checkpoint(ctx, "PASSIVE"); err == nil && frames >= tailFrames && c.after != nil {
				c.after()
			}
		}
	}
}

// tailFrames is the log, in frames, from which the writer is asked to copy
// the tail (1 MiB of 4 KiB pages): a smaller log is left to start over on
// its own, at a checkpoint no write overlaps, which spares the writer the
// checkpoint's two fsyncs when the load is light.
const tailFrames = 256

// checkpoint runs one checkpoint and returns the frames the log held; a
// failure is retried at the next tick.
func (c *checkpointer) checkpoint(ctx context.Context, mode string) (int, error) {
	var busy, logPages, done int
	err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logPages, &done)
	if err != nil {
		return 0, fmt.Errorf("runner/store/sqlite: checkpoint: %w", err)
	}
	return logPages, nil
}

// stop ends the loop and truncates the WAL, so a closed store leaves a
// small file behind.
func (c *checkpointer) stop() error {
	c.cancel()
	<-c.done
	_, err := c.checkpoint(context.Background(), "TRUNCATE")
	return errors.Join(err, c.db.Close())
}
