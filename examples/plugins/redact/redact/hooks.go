package redact

import (
	"strconv"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// MapResult is the map_result hook: it maps the run result with the default
// mapping (compat.MapResult), for either endpoint, then redacts the
// assistant text in the reply.
func MapResult(in []byte) ([]byte, error) {
	out, err := compat.MapResult(in)
	if err != nil {
		return nil, err
	}
	return Reply(out)
}

// Reply redacts the assistant text of a reply body: the message content of
// each chat.completion choice and the text of each content part of a
// Response's output items, and a Response's output_text. Everything else is left byte for byte as it was.
func Reply(body []byte) ([]byte, error) {
	type edit struct{ path, text string }
	var edits []edit
	check := func(path string, v gjson.Result) {
		if v.Type != gjson.String {
			return
		}
		if red := Text(v.Str); red != v.Str {
			edits = append(edits, edit{path, red})
		}
	}
	forEach(gjson.GetBytes(body, "choices"), func(i string, choice gjson.Result) {
		check("choices."+i+".message.content", choice.Get("message.content"))
	})
	// output_text repeats the message text of a Response: it is redacted
	// too, or the redaction would be undone one field over.
	check("output_text", gjson.GetBytes(body, "output_text"))
	forEach(gjson.GetBytes(body, "output"), func(i string, item gjson.Result) {
		forEach(item.Get("content"), func(j string, part gjson.Result) {
			check("output."+i+".content."+j+".text", part.Get("text"))
		})
	})
	// Edits are applied once the reading is done: the results above may
	// point into body.
	var err error
	for _, e := range edits {
		if body, err = sjson.SetBytes(body, e.path, e.text); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// forEach calls fn with the index, as a path element, and the value of each
// element of an array; anything else has no elements.
func forEach(array gjson.Result, fn func(i string, v gjson.Result)) {
	if !array.IsArray() {
		return
	}
	i := 0
	array.ForEach(func(_, v gjson.Result) bool {
		fn(strconv.Itoa(i), v)
		i++
		return true
	})
}
