package translate

import (
	"context"
	"testing"

	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
)

// jsonMapper is a Mapper whose map_result output is JSON by construction
// (runtime.Plugin.ResultIsJSON), as the built-in default's is.
type jsonMapper struct {
	*filtertest.Mapper
	isJSON bool
}

func (m jsonMapper) ResultIsJSON() bool { return m.isJSON }

// A map_result output of a mapping that is JSON by construction is
// compacted as any other (an SSE data line ends at its first newline)
// but not validated again; any other plugin's is validated, and one that
// is not JSON is that plugin's error.
func TestResultOfAJSONMappingIsCompactedNotValidated(t *testing.T) {
	mapperOf := func(out string, isJSON bool) jsonMapper {
		return jsonMapper{&filtertest.Mapper{Hooks: map[runtime.Hook]filtertest.Hook{
			runtime.MapResult: func([]byte) ([]byte, error) { return []byte(out), nil }}}, isJSON}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		out    string
		isJSON bool
		want   string // "": an error
	}{
		{"{\n  \"a\": [1, 2]\n}\n", true, `{"a":[1,2]}`},
		{"{\n  \"a\": [1, 2]\n}\n", false, `{"a":[1,2]}`},
		{`{"a":"x y"}`, false, `{"a":"x y"}`},
		{`{"a":[1}`, false, ""},
		{`{"a":[1}`, true, `{"a":[1}`}, // trusted: not read again
		{`[1]`, true, ""},
	} {
		got, err := mapResultWith(ctx, mapperOf(tc.out, tc.isJSON), &abi.ResultInput{Endpoint: "chat.completions"})
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q (json %v): %s, want an error", tc.out, tc.isJSON, got)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%q (json %v): %s %v, want %s", tc.out, tc.isJSON, got, err, tc.want)
		}
	}
}
