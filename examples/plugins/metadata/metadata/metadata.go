// Package metadata is the logic of the metadata example plugin: a result
// mapper that marks each reply with the mapping that produced it, in fields
// the official OpenAI SDKs already read, so that clients and logs can tell
// which plugin version answered without any new header or schema.
//
//   - Responses: entries merged into the response's "metadata", the
//     string-to-string map a client sets on the request and gets back.
//   - Chat Completions: "system_fingerprint", the string the API documents
//     as identifying the backend configuration behind a completion. (Chat
//     completion objects have no metadata to merge into, and service_tier is
//     an enum clients may branch on, so it is not touched.)
//
// Streamed replies carry the fields where the reply object is built by the
// plugin: the Responses snapshots (response.created, response.completed);
// chat chunks are framed by the host.
package metadata

import (
	"fmt"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Version is the plugin's version, reported to the host and in the replies.
const Version = "1.0.0"

// Fields are the metadata entries added to every Response. They replace a
// client's entries of the same name, so a client cannot pass its own reply
// off as mapped by this plugin. Edit them here and rebuild.
var Fields = []struct{ Key, Value string }{
	{"mapped_by", "metadata-plugin"},
	{"plugin_version", Version},
}

// Fingerprint is the system_fingerprint set on every chat completion.
const Fingerprint = "fp_runedge_metadata_" + Version

// MapResult is the map_result hook: it maps the run result with the default
// mapping (compat.MapResult), for either endpoint, then adds the fields.
func MapResult(in []byte) ([]byte, error) {
	out, err := compat.MapResult(in)
	if err != nil {
		return nil, err
	}
	switch gjson.GetBytes(in, "endpoint").Str {
	case compat.EndpointChat:
		return sjson.SetBytes(out, "system_fingerprint", Fingerprint)
	case compat.EndpointResponses:
		if !gjson.GetBytes(out, "metadata").IsObject() {
			// A client may send "metadata": null; merging needs an object.
			if out, err = sjson.SetRawBytes(out, "metadata", []byte("{}")); err != nil {
				return nil, err
			}
		}
		for _, f := range Fields {
			if out, err = sjson.SetBytes(out, "metadata."+pathKey(f.Key), f.Value); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// SelfTest is the self_test hook: the default mapping must work, and each
// endpoint's reply must come out with the fields.
func SelfTest() error {
	if err := compat.SelfTest(); err != nil {
		return err
	}
	for _, c := range []struct{ endpoint, path, want string }{
		{compat.EndpointChat, "system_fingerprint", Fingerprint},
		{compat.EndpointResponses, "metadata.plugin_version", Version},
	} {
		out, err := MapResult([]byte(`{"endpoint":"` + c.endpoint + `","id":"id_1","message_id":"msg_1","created":1700000000,` +
			`"model":"service","status":"completed","result":{"text":"pong"},"echo":{}}`))
		if err != nil {
			return err
		}
		if got := gjson.GetBytes(out, c.path).String(); got != c.want {
			return fmt.Errorf("metadata self-test: %s reply has %s %q, want %q", c.endpoint, c.path, got, c.want)
		}
	}
	return nil
}

// pathKey escapes key for use as one element of an sjson path, so that a key
// with a dot or a wildcard is set as it is rather than read as a path.
func pathKey(key string) string {
	var b []byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		plain := 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c >= 0x80
		if !plain {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return string(b)
}
