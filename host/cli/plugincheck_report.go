package cli

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// How `plugin check` shows what a plugin mapped: a line per call that sums
// up the output and names what the plugin changed compared with the default
// mapping, which is what an operator wants to see before a swap.

// describeRequest sums up a native request: its messages and what else it
// asks for.
func describeRequest(out []byte) string {
	var parts []string
	gjson.GetBytes(out, "request.input").ForEach(func(_, m gjson.Result) bool {
		parts = append(parts, m.Get("role").Str+" "+clip(m.Get("content").Str))
		return true
	})
	desc := "input [" + strings.Join(parts, ", ") + "]"
	if in := gjson.GetBytes(out, "request.instructions"); in.Exists() {
		desc += ", instructions " + clip(in.Str)
	}
	if gjson.GetBytes(out, "request.output_schema").Exists() {
		desc += ", output_schema"
	}
	if gjson.GetBytes(out, "request.stream").Bool() {
		desc += ", stream"
	}
	return desc
}

// versusDefault names the values in which out differs from def, the
// default mapping's output for the same input: the change the plugin makes.
func versusDefault(out, def []byte) string {
	got, want := leaves(out), leaves(def)
	var diffs []string
	for _, path := range slices.Sorted(maps.Keys(got)) {
		if w, ok := want[path]; !ok {
			diffs = append(diffs, "+"+path+" "+clipRaw(got[path]))
		} else if w != got[path] {
			diffs = append(diffs, path+" "+clipRaw(got[path]))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[path]; !ok && !filled(got, path) {
			diffs = append(diffs, "-"+path)
		}
	}
	switch {
	case len(diffs) == 0:
		return "same as the default mapping"
	case len(diffs) > 4:
		diffs = append(diffs[:4], fmt.Sprintf("… %d more", len(diffs)-4))
	}
	return "differs from the default mapping: " + strings.Join(diffs, ", ")
}

// filled reports whether leaves has a value under path, an empty object or
// array in the default mapping that the plugin filled in: that is not a
// removal.
func filled(leaves map[string]string, path string) bool {
	for p := range leaves {
		if strings.HasPrefix(p, path+".") {
			return true
		}
	}
	return false
}

// leaves flattens a JSON document into its scalar values (and empty objects
// and arrays) by gjson path.
func leaves(doc []byte) map[string]string {
	out := make(map[string]string)
	var walk func(path string, v gjson.Result)
	walk = func(path string, v gjson.Result) {
		out[path] = v.Raw // replaced by the members, if there are any
		if !v.IsObject() && !v.IsArray() {
			return
		}
		i := 0
		v.ForEach(func(k, e gjson.Result) bool {
			delete(out, path)
			key := k.Str
			if v.IsArray() {
				key = strconv.Itoa(i)
			}
			if path != "" {
				key = path + "." + key
			}
			walk(key, e)
			i++
			return true
		})
	}
	walk("", gjson.ParseBytes(doc))
	return out
}

// clipMax is how much of a text a line shows.
const clipMax = 60

// clip quotes s for a line of output, shortened to clipMax bytes.
func clip(s string) string {
	if len(s) <= clipMax {
		return strconv.Quote(s)
	}
	cut := clipMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// clipRaw shows a JSON value for a line of output: a string as clip does,
// anything else as it is, shortened.
func clipRaw(raw string) string {
	if strings.HasPrefix(raw, `"`) {
		return clip(gjson.Parse(raw).Str)
	}
	if len(raw) > clipMax {
		return raw[:clipMax] + "…"
	}
	return raw
}
