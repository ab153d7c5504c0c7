package mapping

import (
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/mediaurl"
	"github.com/runedge/runedge/runner/native"
)

// The media URL policy (internal/mediaurl, the media section) is applied
// here, to the native request the mapping returned: whatever plugin mapped
// the body, the built-in default run natively or any plugin in
// WebAssembly, what reaches the upstream passes the one check. The refusal
// names the client's part: the offending URL is looked up in the body,
// which only a refusal pays for.

// checkMedia checks the media parts of msgs. history says they are a
// conversation's stored items (named "conversation"), not the body's.
func checkMedia(p mediaurl.Policy, x *filters.Exchange, msgs []native.Message, history bool) error {
	for _, m := range msgs {
		for _, part := range m.Parts {
			var (
				bad, why string
				code     = apierr.CodeInvalidBody
			)
			switch part.Type {
			case native.PartImage:
				if err := p.Check(part.URL); err != nil {
					bad, why = part.URL, err.Error()
				}
			case native.PartFile:
				if part.URL != "" {
					// OpenAI's chat completions, which the upstream speaks,
					// has no field for a file by URL, and file_data is not
					// one (an upstream might fetch it, another would read
					// the URL as the file's bytes).
					bad, code = part.URL, apierr.CodeUnsupportedParameter
					why = "a file by URL cannot be passed on (the upstream's chat completions has no file URL): send the file as file_data"
				} else if err := mediaurl.CheckFileData(part.Data); err != nil {
					bad, why = part.Data, err.Error()
				}
			}
			if bad == "" {
				continue
			}
			param := "conversation"
			if !history {
				param = partParam(x, bad)
			}
			return apierr.Param(code, param, why)
		}
	}
	return nil
}

// partParam names the part of the client's body that holds the media URL
// (or file data) u: input[i].content[j].image_url on Responses,
// messages[i].content[j].image_url on chat completions, and so on; the
// list itself when a plugin wrote a URL the body does not hold as such.
func partParam(x *filters.Exchange, u string) string {
	list := "input"
	if x.Endpoint == filters.ChatCompletions {
		list = "messages"
	}
	param := list
	gjson.GetBytes(x.Body, list).ForEach(func(i, item gjson.Result) bool {
		item.Get("content").ForEach(func(j, part gjson.Result) bool {
			at := list + "[" + strconv.Itoa(int(i.Int())) + "].content[" + strconv.Itoa(int(j.Int())) + "]"
			for _, f := range []string{"image_url", "image_url.url", "file_url", "file_data", "file.file_data"} {
				if v := part.Get(f); v.Type == gjson.String && v.Str == u {
					if f == "image_url.url" {
						f = "image_url" // the part's field, as OpenAI names it
					}
					param = at + "." + f
					return false
				}
			}
			return true
		})
		return param == list
	})
	return param
}
