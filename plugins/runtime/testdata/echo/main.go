// Command echo is a test plugin built with the SDK. map_request echoes its
// input; map_result acts on commands in its input so that tests can make a
// guest misbehave in each way the host must survive.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/runedge/runedge/plugins/sdk"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// version is the version the plugin declares.
const version = "1.2.0-test"

func init() {
	sdk.Register(sdk.Hooks{
		MapRequest: func(in []byte) ([]byte, error) { return in, nil },
		MapResult:  mapResult,
		MapStream:  sdk.MapStreamFunc(holdPartialWord),
		SelfTest:   selfTest,
		Version:    version,
	})
}

// holdPartialWord emits the text up to its last space and holds back the
// rest, a word the next text may continue: the shape of a plugin that must
// see whole words, such as one redacting e-mail addresses. The text is
// upper-cased so that tests can tell it went through the plugin; a text of
// "fail" fails.
func holdPartialWord(in sdk.StreamInput) (sdk.StreamOutput, error) {
	if in.Text == "fail" {
		return sdk.StreamOutput{}, errors.New("stream failure on purpose")
	}
	text := strings.ToUpper(in.Text)
	cut := strings.LastIndexByte(text, ' ') + 1
	if in.Final {
		cut = len(text)
	}
	return sdk.StreamOutput{Emit: text[:cut], Hold: text[cut:]}, nil
}

func main() {}

// hoard keeps what "hog" allocates reachable.
var hoard [][]byte

// spins is what "loop" and "work" count, a global so that their loops are
// not optimised away.
var spins int

// step is the function "work" calls.
//
//go:noinline
func step(i int) int { return i & 1 }

// mapResult runs the command in its input:
//
//	invalid:MESSAGE|PARAM|CODE  an invalid-input error, wrapped
//	fail:MESSAGE                an internal error
//	panic                       a panic in the hook
//	crash                       an unrecovered panic in another goroutine
//	hog:MIB                     allocate MIB MiB and keep it
//	exit:CODE                   print to stderr and exit the guest
//	spin:MICROS:...             keep the CPU busy for MICROS µs, then echo
//	loop                        loop forever, never calling a function
//	work:N                      call a function N times, never calling the host
//	json:DOCUMENT               decode and re-encode DOCUMENT with encoding/json
//	map:DOCUMENT                read DOCUMENT's messages and add a field with
//	                            gjson and sjson, like a real mapping plugin
//
// Anything else is returned prefixed with "result:".
func mapResult(in []byte) ([]byte, error) {
	cmd, arg, _ := strings.Cut(string(in), ":")
	switch cmd {
	case "invalid":
		f := strings.SplitN(arg, "|", 3)
		for len(f) < 3 {
			f = append(f, "")
		}
		return nil, fmt.Errorf("checking input: %w", sdk.InvalidInput(f[0], f[1], f[2]))
	case "fail":
		return nil, errors.New(arg)
	case "panic":
		panic("boom")
	case "crash":
		done := make(chan struct{})
		go func() { panic("crash in goroutine") }()
		<-done
	case "hog":
		mib, err := strconv.Atoi(arg)
		if err != nil {
			return nil, err
		}
		for range mib {
			hoard = append(hoard, bytes.Repeat([]byte{1}, 1<<20))
		}
		return []byte("hogged"), nil
	case "spin":
		micros, _, _ := strings.Cut(arg, ":")
		n, err := strconv.Atoi(micros)
		if err != nil {
			return nil, err
		}
		for start := time.Now(); time.Since(start) < time.Duration(n)*time.Microsecond; {
		}
	case "loop":
		for {
			spins++
		}
	case "work":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return nil, err
		}
		for i := range n {
			spins += step(i)
		}
	case "json":
		var v any
		if err := json.Unmarshal([]byte(arg), &v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	case "map":
		doc := []byte(arg)
		chars := 0
		gjson.GetBytes(doc, "messages").ForEach(func(_, m gjson.Result) bool {
			chars += len(m.Get("content").String())
			return true
		})
		return sjson.SetBytes(doc, "metadata.chars", chars)
	case "exit":
		code, err := strconv.Atoi(arg)
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(os.Stderr, "exiting on purpose")
		os.Exit(code)
	}
	return append([]byte("result:"), in...), nil
}

// selfTest checks that the echo hook works, as a real plugin would check
// its mapping against a golden case.
func selfTest() error {
	out, err := mapResult([]byte("ping"))
	if err != nil || string(out) != "result:ping" {
		return fmt.Errorf("self test: got %q, %v", out, err)
	}
	return nil
}
