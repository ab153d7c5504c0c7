package compat

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMapResultGolden maps every testdata/result/NAME.json and compares the
// reply, indented for reading, with NAME.golden.
func TestMapResultGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/result/*.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs under testdata/result: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MapResult(bytes.TrimSpace(input))
			if err != nil {
				t.Fatalf("MapResult: %v", err)
			}
			var compacted bytes.Buffer
			if err := json.Compact(&compacted, got); err != nil {
				t.Fatalf("reply is not valid JSON: %v\n%s", err, got)
			}
			if !bytes.Equal(compacted.Bytes(), got) {
				t.Errorf("reply is not compact JSON: %s", got)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, got, "", "  "); err != nil {
				t.Fatal(err)
			}
			indented.WriteByte('\n')
			checkGolden(t, filepath.Join("testdata/result", name+".golden"), indented.Bytes())
		})
	}
}
