package xdscheck

import (
	"fmt"
	"strings"
)

// formatCommands are the command operators of Envoy's substitution format
// strings that a header value may hold (Envoy's access-log command list,
// which header values share). An unknown one makes Envoy reject the whole
// resource.
var formatCommands = map[string]bool{
	"REQ": true, "RESP": true, "TRAILER": true, "REQ_WITHOUT_QUERY": true,
	"START_TIME": true, "EMIT_TIME": true, "DURATION": true,
	"BYTES_RECEIVED": true, "BYTES_SENT": true, "PROTOCOL": true, "UPSTREAM_PROTOCOL": true,
	"RESPONSE_CODE": true, "RESPONSE_CODE_DETAILS": true, "RESPONSE_FLAGS": true, "RESPONSE_FLAGS_LONG": true,
	"CONNECTION_TERMINATION_DETAILS": true, "CONNECTION_ID": true, "STREAM_ID": true, "UNIQUE_ID": true,
	"HOSTNAME": true, "ENVIRONMENT": true, "ROUTE_NAME": true, "VIRTUAL_CLUSTER_NAME": true,
	"REQUESTED_SERVER_NAME": true, "UPSTREAM_HOST": true, "UPSTREAM_CLUSTER": true,
	"UPSTREAM_LOCAL_ADDRESS": true, "UPSTREAM_LOCAL_ADDRESS_WITHOUT_PORT": true, "UPSTREAM_LOCAL_PORT": true,
	"UPSTREAM_REMOTE_ADDRESS": true, "UPSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": true, "UPSTREAM_REMOTE_PORT": true,
	"UPSTREAM_TRANSPORT_FAILURE_REASON": true,
	"DOWNSTREAM_REMOTE_ADDRESS":         true, "DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": true, "DOWNSTREAM_REMOTE_PORT": true,
	"DOWNSTREAM_DIRECT_REMOTE_ADDRESS": true, "DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT": true,
	"DOWNSTREAM_LOCAL_ADDRESS": true, "DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT": true, "DOWNSTREAM_LOCAL_PORT": true,
	"DOWNSTREAM_LOCAL_URI_SAN": true, "DOWNSTREAM_PEER_URI_SAN": true, "DOWNSTREAM_LOCAL_DNS_SAN": true, "DOWNSTREAM_PEER_DNS_SAN": true,
	"DOWNSTREAM_LOCAL_SUBJECT": true, "DOWNSTREAM_PEER_SUBJECT": true, "DOWNSTREAM_PEER_ISSUER": true,
	"DOWNSTREAM_TLS_SESSION_ID": true, "DOWNSTREAM_TLS_CIPHER": true, "DOWNSTREAM_TLS_VERSION": true,
	"DOWNSTREAM_PEER_FINGERPRINT_256": true, "DOWNSTREAM_PEER_FINGERPRINT_1": true, "DOWNSTREAM_PEER_SERIAL": true,
	"DOWNSTREAM_PEER_CERT": true, "DOWNSTREAM_PEER_CERT_V_START": true, "DOWNSTREAM_PEER_CERT_V_END": true,
	"DYNAMIC_METADATA": true, "CLUSTER_METADATA": true, "UPSTREAM_METADATA": true,
	"FILTER_STATE": true, "UPSTREAM_FILTER_STATE": true,
	"TLS_JA3_FINGERPRINT": true, "TLS_JA4_FINGERPRINT": true,
}

// FormatString checks s with the rules of Envoy's substitution format
// parser, which every header value Envoy adds goes through: "%%" is a
// literal "%"; any other "%" opens a command, NAME, NAME(args) or either
// with ":max-length", that a "%" closes, and NAME must be a command Envoy
// knows. A value that fails here makes Envoy reject its whole route
// configuration (or cluster).
func FormatString(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			i++
			continue
		}
		n, err := formatCommand(s[i+1:])
		if err != nil {
			return fmt.Errorf("format string %q at %d: %w", s, i, err)
		}
		i += n
	}
	return nil
}

// formatCommand parses the command at the start of s, just after its
// opening "%", and returns its length with the closing "%".
func formatCommand(s string) (int, error) {
	i := 0
	for i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9' || s[i] == '_') {
		i++
	}
	name := s[:i]
	if name == "" {
		return 0, fmt.Errorf("a %% that starts no command (write %%%% for a literal %%)")
	}
	if !formatCommands[name] {
		return 0, fmt.Errorf("%q is not an Envoy command", name)
	}
	if i < len(s) && s[i] == '(' {
		closing := strings.IndexByte(s[i:], ')')
		if closing < 0 {
			return 0, fmt.Errorf("command %s: ( is not closed", name)
		}
		i += closing + 1
	}
	if i < len(s) && s[i] == ':' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 {
			return 0, fmt.Errorf("command %s: \":\" is not followed by a maximum length", name)
		}
		i = j
	}
	if i >= len(s) || s[i] != '%' {
		return 0, fmt.Errorf("command %s is not closed by %%", name)
	}
	return i + 1, nil
}
