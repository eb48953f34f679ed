package xdstls

import (
	"log/slog"
	"net"
	"sync"

	"google.golang.org/grpc/credentials"
)

// maxLoggedHandshakes bounds the memory used to log each failure once.
const maxLoggedHandshakes = 1024

// logHandshakeFailures wraps server credentials so that a client turned
// away during the TLS handshake (no certificate, another CA, an old TLS
// version) is logged: gRPC drops such a connection without a word in the
// control plane's log, and the operator of a misconfigured Envoy would
// see only reconnects. Each client host and error is logged once.
func logHandshakeFailures(c credentials.TransportCredentials, log *slog.Logger) credentials.TransportCredentials {
	return &handshakeLogger{TransportCredentials: c, log: log, seen: map[string]bool{}}
}

type handshakeLogger struct {
	credentials.TransportCredentials
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool
}

func (h *handshakeLogger) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := h.TransportCredentials.ServerHandshake(c)
	if err != nil {
		host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		if h.first(host + "\x00" + err.Error()) {
			h.log.Warn("xDS client TLS handshake failed", "remote", c.RemoteAddr().String(), "error", err)
		}
	}
	return conn, info, err
}

func (h *handshakeLogger) first(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[key] || len(h.seen) >= maxLoggedHandshakes {
		return false
	}
	h.seen[key] = true
	return true
}

// Clone keeps the log of what was already reported.
func (h *handshakeLogger) Clone() credentials.TransportCredentials {
	return &handshakeLogger{TransportCredentials: h.TransportCredentials.Clone(), log: h.log, seen: h.seen}
}
