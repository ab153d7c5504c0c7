package model

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/jsondepth"
)

// MaxBodyDepth bounds how deeply any field of a request body nests. It is
// checked once, on the bytes, before anything decodes the body: a 1 MB
// body can nest 450,000 levels, which recursive parsers (a plugin's, the
// client reading the echo of its metadata) do not survive. The deepest
// legitimate field is a JSON Schema (at most 64 levels of its own, see
// runner/schema.MaxSchemaDepth) a few levels into the body.
const MaxBodyDepth = 128

// checkDepth refuses a body that nests deeper than MaxBodyDepth with a 400
// naming the field that does: invalid_schema when it is a schema field,
// invalid_body otherwise.
func checkDepth(ep filters.Endpoint, body []byte) error {
	at := jsondepth.Exceeds(body, MaxBodyDepth)
	if at < 0 {
		return nil
	}
	param := fieldAt(ep, body, at)
	if isSchemaField(ep, param) {
		e := apierr.Param(apierr.CodeInvalidSchema, param, param+": the schema nests deeper than the limit of "+strconv.Itoa(MaxBodyDepth)+" levels")
		return e
	}
	name := param
	if name == "" {
		name = "the request body"
	}
	return apierr.InvalidBody(param, "%s nests deeper than the limit of %d levels", name, MaxBodyDepth)
}

// fieldAt names the field of body that holds offset at, as the API names
// params: the top-level field ("metadata"), an item's field in a list of
// items ("input[0].content"), or a schema field ("text.format.schema",
// "tools[0].function.parameters"). Only the error path calls it.
func fieldAt(ep filters.Endpoint, body []byte, at int) string {
	path := ""
	cur := gjson.ParseBytes(body)
	if !cur.IsObject() {
		return ""
	}
	for steps := 1; steps <= 4; steps++ {
		var next gjson.Result
		step := ""
		i := 0
		cur.ForEach(func(k, v gjson.Result) bool {
			if at >= v.Index && at < v.Index+len(v.Raw) {
				next = v
				if k.Type == gjson.String {
					step = k.Str
				} else {
					step = "[" + strconv.Itoa(i) + "]"
				}
				return false
			}
			i++
			return true
		})
		if step == "" {
			break
		}
		if steps == 2 && step[0] == '[' && !next.IsObject() {
			break // a list of values, not of items: the field is the list
		}
		if path != "" && step[0] != '[' {
			path += "."
		}
		path += step
		if next.Index == at || isSchemaField(ep, path) || !descend(ep, path, steps, next) {
			break
		}
		cur = next
	}
	return path
}

// descend reports whether fieldAt names a field deeper than path: the item
// of a top-level list, that item's field, and the way to a schema field.
func descend(ep filters.Endpoint, path string, steps int, v gjson.Result) bool {
	switch {
	case strings.HasPrefix(filters.SchemaParam(ep), path+"."), toolPrefix.MatchString(path):
		return true
	case steps == 1:
		return v.IsArray()
	case steps == 2:
		return strings.HasSuffix(path, "]") && v.IsObject()
	}
	return false
}

var toolPrefix = regexp.MustCompile(`^tools(\[\d+\](\.function)?)?$`)

var toolParameters = regexp.MustCompile(`^tools\[\d+\](\.function)?\.parameters$`)

// isSchemaField reports whether param is where the endpoint takes a JSON
// Schema: its structured-output schema or a tool's parameters.
func isSchemaField(ep filters.Endpoint, param string) bool {
	return param == filters.SchemaParam(ep) || toolParameters.MatchString(param)
}
