package compat

import "github.com/runedge/runedge/plugins/guestjson"

// Content parts beyond text: images, files and audio in a user message.
// Each endpoint names them its own way (Responses input_image, input_file,
// input_audio; chat image_url, file, input_audio); both become the native
// parts (runner/native Part), which the provider writes in its upstream's
// form:
//
//	{"type":"image","url","detail"} {"type":"file","data"|"url","filename"}
//	{"type":"audio","data","format"} {"type":"text","text"}
//
// A message of text parts only is written as today, its text
// concatenated in "content": the parts list is added, in a second pass,
// only when a part is not text, so text-only messages cost what they did.
// file_id references need a files API this service does not have: refused
// with unsupported_parameter naming the part, never dropped.

// dialect is how an endpoint spells content parts.
type dialect struct {
	isText func(value) bool
	chat   bool
}

var (
	chatParts      = &dialect{isText: isChatText, chat: true}
	responsesParts = &dialect{isText: isResponsesText}
)

// isMedia reports whether typ is a non-text part the endpoint knows.
func (d *dialect) isMedia(typ value) bool {
	if d.chat {
		return typ.Is("image_url") || typ.Is("file") || typ.Is("input_audio")
	}
	return typ.Is("input_image") || typ.Is("input_file") || typ.Is("input_audio")
}

// appendParts appends `,"parts":[…]`: every part of content (an array
// whose parts appendPart checked) in native form. where names the
// message's content for errors.
func appendParts(dst []byte, content value, d *dialect, where string) ([]byte, error) {
	dst = append(dst, `,"parts":[`...)
	var err error
	j := 0
	content.Elements(func(part value) bool {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst, err = appendNativePart(dst, part, d, indexed(where, j))
		j++
		return err == nil
	})
	return append(dst, ']'), err
}

// appendNativePart appends one part in native form.
func appendNativePart(dst []byte, part value, d *dialect, where string) ([]byte, error) {
	typ := part.Get("type")
	switch {
	case d.isText(typ):
		dst = append(dst, `{"type":"text","text":"`...)
		dst = guestjson.AppendStringValue(dst, part.Get("text"))
		return append(dst, `"}`...), nil
	case typ.Is("input_image"):
		return appendImage(dst, part.Get("image_url"), part.Get("detail"), part.Get("file_id"), where, where+".image_url")
	case typ.Is("image_url"):
		img := part.Get("image_url")
		if !img.IsObject() {
			return dst, invalid(where+".image_url", "an image_url part needs an image_url object with a url")
		}
		return appendImage(dst, img.Get("url"), img.Get("detail"), "", where+".image_url", where+".image_url.url")
	case typ.Is("input_file"):
		return appendFile(dst, part, where)
	case typ.Is("file"):
		f := part.Get("file")
		if !f.IsObject() {
			return dst, invalid(where+".file", "a file part needs a file object with file_data")
		}
		return appendFile(dst, f, where+".file")
	}
	// input_audio, both endpoints: {"input_audio":{"data","format"}}.
	a := part.Get("input_audio")
	if !a.IsObject() {
		return dst, invalid(where+".input_audio", "an input_audio part needs an input_audio object with data and format")
	}
	data, format := a.Get("data"), a.Get("format")
	if !data.IsString() || data == `""` {
		return dst, invalid(where+".input_audio.data", "input_audio.data must be the audio, base64-encoded")
	}
	if !format.IsString() || format == `""` {
		return dst, invalid(where+".input_audio.format", "input_audio.format must name the audio's format (wav, mp3)")
	}
	dst = append(dst, `{"type":"audio","data":"`...)
	dst = guestjson.AppendStringValue(dst, data)
	dst = append(dst, `","format":"`...)
	dst = guestjson.AppendStringValue(dst, format)
	return append(dst, `"}`...), nil
}

// appendImage appends an image part; where names the part, urlParam its URL.
func appendImage(dst []byte, url, detail, fileID value, where, urlParam string) ([]byte, error) {
	if !fileID.IsNull() {
		return dst, unsupported(where+".file_id", "file_id references are not supported (this service has no files API): send the image as a URL or a data URL")
	}
	if !url.IsString() || url == `""` {
		return dst, invalid(urlParam, "an image part needs its URL, or a data URL, as a string")
	}
	if !detail.IsNull() && !detail.Is("low") && !detail.Is("high") && !detail.Is("auto") && !detail.Is("original") {
		return dst, invalid(where+".detail", "detail must be low, high or auto")
	}
	dst = append(dst, `{"type":"image","url":"`...)
	dst = guestjson.AppendStringValue(dst, url)
	if detail.IsString() {
		dst = append(dst, `","detail":"`...)
		dst = guestjson.AppendStringValue(dst, detail)
	}
	return append(dst, `"}`...), nil
}

// appendFile appends a file part from f, which holds file_data or
// file_url (Responses only), an optional filename, and no file_id.
func appendFile(dst []byte, f value, where string) ([]byte, error) {
	data, url, name := f.Get("file_data"), f.Get("file_url"), f.Get("filename")
	if !f.Get("file_id").IsNull() {
		return dst, unsupported(where+".file_id", "file_id references are not supported (this service has no files API): send the file as file_data")
	}
	if !name.IsNull() && !name.IsString() {
		return dst, invalid(where+".filename", "filename must be a string")
	}
	dst = append(dst, `{"type":"file"`...)
	switch {
	case data.IsString() && data != `""`:
		dst = append(dst, `,"data":"`...)
		dst = guestjson.AppendStringValue(dst, data)
	case url.IsString() && url != `""`:
		dst = append(dst, `,"url":"`...)
		dst = guestjson.AppendStringValue(dst, url)
	default:
		return dst, invalid(where+".file_data", "a file part needs file_data (a data URL or base64) or, on Responses, file_url")
	}
	if name.IsString() {
		dst = append(dst, `","filename":"`...)
		dst = guestjson.AppendStringValue(dst, name)
	}
	return append(dst, `"}`...), nil
}
