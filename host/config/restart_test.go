package config

import (
	"os"
	"strings"
	"testing"
)

// restartOnly reports whether field (a path in the file, "limits.burst")
// is, or is inside, a setting of RestartOnly.
func restartOnly(field string) bool {
	for _, s := range RestartOnly {
		if field == s.Name || strings.HasPrefix(field, s.Name+".") {
			return true
		}
	}
	return false
}

// The reload column of docs/configuration.md says what RestartOnly does:
// "restart" for exactly the fields a reload keeps, "live" for the rest.
func TestDocsReloadColumnMatchesRestartOnly(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(b), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil || (m[3] != "live" && m[3] != "restart") {
			continue
		}
		rows++
		if want := map[bool]string{true: "restart", false: "live"}[restartOnly(m[1])]; m[3] != want {
			t.Errorf("%s: %s is documented %q; config.RestartOnly makes it %q", docPath, m[1], m[3], want)
		}
	}
	if rows == 0 {
		t.Fatalf("no field rows with a reload column in %s", docPath)
	}
	for _, s := range RestartOnly {
		if !strings.Contains(string(b), "`"+s.Name) {
			t.Errorf("%s does not document restart-only %s", docPath, s.Name)
		}
	}
}
