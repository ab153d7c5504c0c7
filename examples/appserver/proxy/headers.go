package proxy

import (
	"net/http"
	"strings"
)

// hopByHop are the headers of one connection (RFC 9110 section 7.6.1):
// they describe the runedge-to-app-server hop, not the answer, so they stop
// here. Everything else, the x-service-* run headers included, passes.
var hopByHop = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// copyHeaders copies src to dst without the hop-by-hop headers, including
// those src's Connection header names.
func copyHeaders(dst, src http.Header) {
	skip := make(map[string]bool, len(hopByHop))
	for _, h := range hopByHop {
		skip[h] = true
	}
	for _, v := range src.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			skip[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	for k, vs := range src {
		if !skip[k] {
			dst[k] = append([]string(nil), vs...)
		}
	}
}
