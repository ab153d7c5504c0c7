package server

import (
	"log/slog"
	"net"
)

// warnNonLoopback logs a warning when the admin listener is reachable from
// other machines: it carries plugin swaps and metrics, guarded by admin
// tokens only, in plain HTTP.
func warnNonLoopback(log *slog.Logger, addr net.Addr) {
	ta, ok := addr.(*net.TCPAddr)
	if !ok || ta.IP.IsLoopback() {
		return
	}
	log.Warn("admin.listen is not a loopback address: the admin API (plugin swap, metrics) is reachable from the network; keep it on 127.0.0.1 or behind a firewall",
		"addr", addr.String())
}
