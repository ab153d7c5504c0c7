package offline

import (
	"strconv"
	"strings"

	"github.com/runedge/runedge/runner"
)

// The offline provider cannot see an image or read a file; it names what it
// received in place of each such part, so a test (or a client author) can
// check that the part arrived whole:
//
//	[image https://example.com/cat.png detail=high]
//	[image data:image/png 1234 bytes]
//	[file report.pdf application/pdf 5678 bytes]   [file https://…/a.pdf]
//	[audio wav 910 bytes]
//
// Sizes are of the data as sent (a data: URL's base64 after the comma).

// partsText is a message's text with each part that is not text named.
func partsText(m runner.Message) string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.Parts {
		switch p.Type {
		case runner.PartText:
			b.WriteString(p.Text)
			continue
		case runner.PartImage:
			b.WriteString(" [image ")
			b.WriteString(nameData(p.URL))
			if p.Detail != "" {
				b.WriteString(" detail=" + p.Detail)
			}
		case runner.PartFile:
			b.WriteString(" [file ")
			if p.Filename != "" {
				b.WriteString(p.Filename + " ")
			}
			if p.Data != "" {
				b.WriteString(nameData(p.Data))
			} else {
				b.WriteString(p.URL)
			}
		case runner.PartAudio:
			b.WriteString(" [audio " + p.Format + " " + strconv.Itoa(len(p.Data)) + " bytes")
		default:
			b.WriteString(" [" + p.Type)
		}
		b.WriteString("] ")
	}
	return b.String()
}

// nameData names a URL or data: URL without repeating its data: a data URL
// by its media type and size, anything else as it is (plain base64 by its
// size).
func nameData(s string) string {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, data, _ := strings.Cut(rest, ",")
		meta, _, _ = strings.Cut(meta, ";")
		return meta + " " + strconv.Itoa(len(data)) + " bytes"
	}
	if strings.Contains(s, "://") {
		return s
	}
	return strconv.Itoa(len(s)) + " bytes"
}
