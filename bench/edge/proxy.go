package main

import (
	"net/http"
	"net/http/httputil"
	"net/url"
)

// proxyHandler is the baseline: a do-nothing reverse proxy from the
// standard library in front of the same upstream. FlushInterval -1 passes
// stream chunks on as they come, as runedge does.
func proxyHandler(upstream string) (http.Handler, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1
	p.Transport = &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}
	return p, nil
}
