package dag

import (
	"fmt"
	"strings"
)

// accessLogCommands are the format operators Envoy accepts in the access
// log of a TCP proxy, with whether each takes an argument in parentheses:
// argRequired, argOptional or argNone. Envoy refuses a format with an
// unknown operator, and takes down the whole listener update with it, so
// an unknown one is caught here and only its proxy is left out.
var accessLogCommands = map[string]argRule{
	"START_TIME": argOptional, "START_TIME_LOCAL": argOptional,
	"DURATION": argNone, "BYTES_RECEIVED": argNone, "BYTES_SENT": argNone,
	"UPSTREAM_WIRE_BYTES_SENT": argNone, "UPSTREAM_WIRE_BYTES_RECEIVED": argNone,
	"DOWNSTREAM_WIRE_BYTES_SENT": argNone, "DOWNSTREAM_WIRE_BYTES_RECEIVED": argNone,
	"PROTOCOL": argNone, "UPSTREAM_PROTOCOL": argNone, "RESPONSE_FLAGS": argNone, "RESPONSE_FLAGS_LONG": argNone,
	"UPSTREAM_HOST": argNone, "UPSTREAM_CLUSTER": argNone, "UPSTREAM_CONNECTION_ID": argNone,
	"UPSTREAM_LOCAL_ADDRESS": argNone, "UPSTREAM_LOCAL_ADDRESS_WITHOUT_PORT": argNone, "UPSTREAM_LOCAL_PORT": argNone,
	"UPSTREAM_REMOTE_ADDRESS": argNone, "UPSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": argNone, "UPSTREAM_REMOTE_PORT": argNone,
	"UPSTREAM_TRANSPORT_FAILURE_REASON": argNone,
	"DOWNSTREAM_REMOTE_ADDRESS":         argNone, "DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": argNone, "DOWNSTREAM_REMOTE_PORT": argNone,
	"DOWNSTREAM_DIRECT_REMOTE_ADDRESS": argNone, "DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT": argNone, "DOWNSTREAM_DIRECT_REMOTE_PORT": argNone,
	"DOWNSTREAM_LOCAL_ADDRESS": argNone, "DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT": argNone, "DOWNSTREAM_LOCAL_PORT": argNone,
	"DOWNSTREAM_TLS_VERSION": argNone, "DOWNSTREAM_TLS_CIPHER": argNone, "DOWNSTREAM_TLS_SESSION_ID": argNone,
	"DOWNSTREAM_PEER_SUBJECT": argNone, "DOWNSTREAM_PEER_ISSUER": argNone, "DOWNSTREAM_PEER_URI_SAN": argNone,
	"DOWNSTREAM_PEER_FINGERPRINT_256": argNone, "DOWNSTREAM_PEER_SERIAL": argNone,
	"DOWNSTREAM_PEER_CERT_V_START": argOptional, "DOWNSTREAM_PEER_CERT_V_END": argOptional,
	"DOWNSTREAM_LOCAL_SUBJECT": argNone, "DOWNSTREAM_LOCAL_URI_SAN": argNone,
	"REQUESTED_SERVER_NAME": argNone, "CONNECTION_ID": argNone, "CONNECTION_TERMINATION_DETAILS": argNone,
	"HOSTNAME": argNone, "ROUTE_NAME": argNone, "STREAM_ID": argNone,
	"DYNAMIC_METADATA": argRequired, "CLUSTER_METADATA": argRequired, "UPSTREAM_METADATA": argRequired,
	"FILTER_STATE": argRequired, "UPSTREAM_FILTER_STATE": argRequired, "ENVIRONMENT": argRequired,
	// HTTP operators are accepted on a TCP log, where they print "-".
	"REQ": argRequired, "RESP": argRequired, "TRAILER": argRequired,
}

type argRule int

const (
	argNone argRule = iota
	argOptional
	argRequired
)

// ValidateAccessLogFormat checks a format string against Envoy's grammar:
// literal text, %% for a percent sign, and operators %NAME%,
// %NAME(ARGUMENT)% or %NAME(ARGUMENT):LENGTH%. The error names the
// operator and its byte offset.
func ValidateAccessLogFormat(format string) error {
	for i := 0; i < len(format); {
		if format[i] != '%' {
			i++
			continue
		}
		if strings.HasPrefix(format[i:], "%%") {
			i += 2
			continue
		}
		n, err := accessLogOperator(format[i:])
		if err != nil {
			return fmt.Errorf("at offset %d: %w", i, err)
		}
		i += n
	}
	return nil
}

// accessLogOperator checks the operator at the start of s (which starts
// with %) and returns its length.
func accessLogOperator(s string) (int, error) {
	j := 1
	for j < len(s) && (s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
		j++
	}
	name := s[1:j]
	if name == "" {
		return 0, fmt.Errorf("%% starts no operator (write %%%% for a percent sign)")
	}
	rule, known := accessLogCommands[name]
	if !known {
		return 0, fmt.Errorf("%%%s%% is not an operator Envoy knows", name)
	}
	hasArg := j < len(s) && s[j] == '('
	if hasArg {
		end := strings.IndexByte(s[j:], ')')
		if end < 0 {
			return 0, fmt.Errorf("%%%s(: the argument has no closing parenthesis", name)
		}
		j += end + 1
	}
	switch {
	case hasArg && rule == argNone:
		return 0, fmt.Errorf("%%%s%% takes no argument", name)
	case !hasArg && rule == argRequired:
		return 0, fmt.Errorf("%%%s%% needs an argument, as in %%%s(NAME)%%", name, name)
	}
	if j < len(s) && s[j] == ':' {
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j+1 {
			return 0, fmt.Errorf("%%%s: the length after ':' is not a number", name)
		}
		j = k
	}
	if j >= len(s) || s[j] != '%' {
		return 0, fmt.Errorf("%%%s is not closed by %%", name)
	}
	return j + 1, nil
}
