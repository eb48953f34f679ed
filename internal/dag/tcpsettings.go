package dag

import (
	"time"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// maxTCPConnections bounds spec.tcpproxy.maxConnections whatever the
// source validated (a directory or etcd checks no CRD rules).
const maxTCPConnections = 10_000_000

// tcpConnectionSettings copies the host's connection settings (idle
// timeout, connection limit, access log) onto out. They belong to the
// root, the owner of the filter chain, never to an included proxy. A bad
// one makes the proxy invalid, with the field named.
func tcpConnectionSettings(tp *switchyardv1.TCPProxy, out *TCPProxy, st *Status) bool {
	ok := true
	if v := tp.IdleTimeout; v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case v == "infinity":
			d = 0
		case err == nil && d < 0:
			st.addError(ErrTCPProxy, "InvalidIdleTimeout", "spec.tcpproxy.idleTimeout: %q is negative", v)
			ok = false
		case err != nil:
			st.addError(ErrTCPProxy, "InvalidIdleTimeout", "spec.tcpproxy.idleTimeout: %q is not a duration such as 30m, or infinity", v)
			ok = false
		}
		out.IdleTimeout = &d
	}
	if m := tp.MaxConnections; m != nil {
		if *m < 1 || *m > maxTCPConnections {
			st.addError(ErrTCPProxy, "InvalidMaxConnections", "spec.tcpproxy.maxConnections: %d is not in 1-%d", *m, maxTCPConnections)
			ok = false
		}
		out.MaxConnections = *m
	}
	if al := tp.AccessLog; al != nil {
		if err := ValidateAccessLogFormat(al.Format); al.Format == "" || err != nil {
			if err == nil {
				st.addError(ErrTCPProxy, "InvalidAccessLogFormat", "spec.tcpproxy.accessLog.format: must not be empty")
			} else {
				st.addError(ErrTCPProxy, "InvalidAccessLogFormat", "spec.tcpproxy.accessLog.format: %v", err)
			}
			ok = false
		}
		out.AccessLogFormat = al.Format
	}
	return ok
}

// tcpClientCertificate resolves the certificate Envoy presents to a
// tcpproxy's backends and has it served; "" when none is asked for.
func (rb *rootBuilder) tcpClientCertificate(owner *switchyardv1.HTTPProxy, tp *switchyardv1.TCPProxy, field string, st *Status) (string, bool) {
	if tp.ClientCertificate == "" {
		return "", true
	}
	s, err := rb.secrets.tlsSecret(tp.ClientCertificate, owner.Namespace)
	if err != nil {
		st.addError(ErrTCPProxy, reasonOf(err), "%s.clientCertificate: %v", field, err)
		return "", false
	}
	rb.addSecret(s)
	return s.Name, true
}
