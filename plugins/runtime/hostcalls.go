package runtime

import (
	"crypto/rand"
	"io"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// The WASI functions a plugin may call run in the host, where the
// instrumentation's fuel does not reach: one random_get of 16 MiB, or one
// fd_write of a million iovecs, is a single step of the guest however long
// it takes, and a guest looping over them ran 11.6 s against a 250 ms
// budget. Every WASI function that does work in proportion to an argument
// reaches the host through one of the hooks below (randomness, stdio,
// clocks, sleep, yield), so each hook checks the running call's deadline,
// and the ones that move bytes check it every hostChunk bytes: a call ends
// within a chunk's work of its deadline, whatever the guest asks. The other
// WASI functions are constant work (no files, arguments or environment are
// configured), and a loop over them is bounded by the loop's own fuel.
const hostChunk = 64 << 10

// checkAt aborts the running guest call, as tick does, when now is past its
// deadline.
func (b *budget) checkAt(now time.Time) {
	if !b.deadline.IsZero() && now.After(b.deadline) {
		b.expired = true
		panic(errTickAbort)
	}
}

func (b *budget) check() { b.checkAt(time.Now()) }

// withHostBudget gives config the instance's host hooks, each charged
// against b, the instance's call budget. stderr keeps the start of what the
// guest writes there; stdout is discarded, stdin is empty.
func withHostBudget(config wazero.ModuleConfig, b *budget, stderr io.Writer) wazero.ModuleConfig {
	return config.
		WithRandSource(budgetedRand{b}).
		WithStdin(budgetedEOF{b}).
		WithStdout(budgetedWriter{b, io.Discard}).
		WithStderr(budgetedWriter{b, stderr}).
		WithWalltime(func() (int64, int32) {
			now := time.Now()
			b.checkAt(now)
			return now.Unix(), int32(now.Nanosecond())
		}, sys.ClockResolution(1)).
		WithNanotime(func() int64 {
			now := time.Now()
			b.checkAt(now)
			return int64(now.Sub(monoEpoch))
		}, sys.ClockResolution(1)).
		// Sleeping returns at once, as wazero's default does: a guest
		// sleeping in the host could not be stopped at its deadline.
		WithNanosleep(func(int64) { b.check() }).
		WithOsyield(b.check)
}

// monoEpoch is the origin of the guests' monotonic clock.
var monoEpoch = time.Now()

// budgetedRand serves random_get at most hostChunk bytes per read, checking
// the deadline before each.
type budgetedRand struct{ b *budget }

func (r budgetedRand) Read(p []byte) (int, error) {
	r.b.check()
	return rand.Read(p[:min(len(p), hostChunk)])
}

// budgetedWriter passes writes on hostChunk bytes at a time, checking the
// deadline before each.
type budgetedWriter struct {
	b *budget
	w io.Writer
}

func (w budgetedWriter) Write(p []byte) (int, error) {
	total := 0
	for {
		w.b.check()
		n := min(len(p), hostChunk)
		if _, err := w.w.Write(p[:n]); err != nil {
			return total, err
		}
		total += n
		if p = p[n:]; len(p) == 0 {
			return total, nil
		}
	}
}

// budgetedEOF is stdin: empty, after a deadline check.
type budgetedEOF struct{ b *budget }

func (r budgetedEOF) Read([]byte) (int, error) {
	r.b.check()
	return 0, io.EOF
}
