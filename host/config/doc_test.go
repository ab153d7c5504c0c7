package config

import (
	"bufio"
	"encoding"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docPath is the user documentation of every configuration field.
const docPath = "../../docs/configuration.md"

// TestConfigurationDocumented walks Config by its yaml tags and compares
// the fields it finds with the table rows of docs/configuration.md: a
// field the doc leaves out, a row naming a field that does not exist, or a
// row whose type is not the field's fails.
func TestConfigurationDocumented(t *testing.T) {
	want := map[string]string{}
	configFields(reflect.TypeFor[Config](), "", want)
	got := documentedFields(t, docPath)
	for _, name := range sortedKeys(want) {
		typ, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: field %s (%s) is not documented", docPath, name, want[name])
		case typ != want[name]:
			t.Errorf("%s: field %s is documented as %q, the struct says %q", docPath, name, typ, want[name])
		}
	}
	for _, name := range sortedKeys(got) {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: documents %s, which is not a configuration field", docPath, name)
		}
	}
}

// TestConfigurationDocWalk checks the walk itself on a few fields of each
// shape, so that the test above cannot pass by finding nothing.
func TestConfigurationDocWalk(t *testing.T) {
	fields := map[string]string{}
	configFields(reflect.TypeFor[Config](), "", fields)
	for name, typ := range map[string]string{
		"listen":                        "string",
		"tokens[].admin":                "boolean",
		"limits.sse_keepalive":          "duration",
		"tracing.sample_ratio":          "number",
		"plugins.origins":               "list of strings",
		"chains.<endpoint>.map_request": "string",
		"admin.ui.session_ttl":          "duration",
	} {
		if fields[name] != typ {
			t.Errorf("walk: %s is %q, want %q", name, fields[name], typ)
		}
	}
	if _, ok := fields["dir"]; ok {
		t.Error("walk: a field tagged yaml:\"-\" was listed")
	}
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// configFields adds every leaf field under t to out, named as in the file
// (sections joined by dots, a list of sections as name[], a map's key as
// <endpoint>), with the type a user writes.
func configFields(t reflect.Type, prefix string, out map[string]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if opts == "inline" && f.Type.Kind() == reflect.Struct { // its fields are this section's
			configFields(f.Type, prefix, out)
			continue
		}
		if tag == "" {
			tag = strings.ToLower(f.Name)
		}
		walkType(f.Type, prefix+tag, out)
	}
}

func walkType(t reflect.Type, name string, out map[string]string) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		out[name] = "duration" // the one text type of the file: Duration
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		configFields(t, name+".", out)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			configFields(t.Elem(), name+"[].", out)
			return
		}
		out[name] = "list of " + kindName(t.Elem()) + "s"
	case reflect.Map:
		walkType(t.Elem(), name+".<endpoint>", out)
	default:
		out[name] = kindName(t)
	}
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	}
	return t.Kind().String()
}

// docRow is a field row of a table whose header starts "| field | type |":
// the field's name in backquotes, its type, its default, and whether a
// reload applies it (live) or only a restart does.
var docRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+?) \\| [^|]+ \\| ([^|]+?) \\|")

// documentedFields reads the field rows of the doc's field tables.
func documentedFields(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	inFields := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !strings.HasPrefix(line, "|"):
			inFields = false
		case strings.HasPrefix(line, "| field | type |"):
			inFields = true
		case inFields && strings.HasPrefix(line, "|---"):
		case inFields:
			m := docRow.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: a field row without name, type, default and reload: %s", path, line)
				continue
			}
			if _, dup := out[m[1]]; dup {
				t.Errorf("%s: %s is documented twice", path, m[1])
			}
			if m[3] != "live" && m[3] != "restart" {
				t.Errorf("%s: %s: reload is %q, want live or restart", path, m[1], m[3])
			}
			out[m[1]] = m[2]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
