package dag

import (
	"strings"
)

// envoyHeaderCommands are the Envoy command operators a header value may
// use as they are: the list Contour allows, so that a value written for
// Contour means the same here. Any other "%...%" reaches Envoy escaped, as
// text; Envoy reads every header value as a format string and rejects the
// whole route configuration over one unknown command.
var envoyHeaderCommands = map[string]bool{
	"DOWNSTREAM_REMOTE_ADDRESS":              true,
	"DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": true,
	"DOWNSTREAM_LOCAL_ADDRESS":               true,
	"DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT":  true,
	"DOWNSTREAM_LOCAL_PORT":                  true,
	"DOWNSTREAM_LOCAL_URI_SAN":               true,
	"DOWNSTREAM_PEER_URI_SAN":                true,
	"DOWNSTREAM_LOCAL_SUBJECT":               true,
	"DOWNSTREAM_PEER_SUBJECT":                true,
	"DOWNSTREAM_PEER_ISSUER":                 true,
	"DOWNSTREAM_TLS_SESSION_ID":              true,
	"DOWNSTREAM_TLS_CIPHER":                  true,
	"DOWNSTREAM_TLS_VERSION":                 true,
	"DOWNSTREAM_PEER_FINGERPRINT_256":        true,
	"DOWNSTREAM_PEER_FINGERPRINT_1":          true,
	"DOWNSTREAM_PEER_SERIAL":                 true,
	"DOWNSTREAM_PEER_CERT":                   true,
	"DOWNSTREAM_PEER_CERT_V_START":           true,
	"DOWNSTREAM_PEER_CERT_V_END":             true,
	"HOSTNAME":                               true,
	"PROTOCOL":                               true,
	"UPSTREAM_REMOTE_ADDRESS":                true,
	"RESPONSE_FLAGS":                         true,
	"RESPONSE_CODE_DETAILS":                  true,
	"TLS_JA3_FINGERPRINT":                    true,
	"TLS_JA4_FINGERPRINT":                    true,
}

// headerVars are the per-object variables a header value may name, each
// replaced by its value before the value reaches Envoy. The CONTOUR_ names
// are kept so that manifests written for Contour keep working unchanged.
type headerVars struct {
	namespace   string
	service     string // empty on route-level policies
	servicePort string
}

func (v headerVars) lookup(name string) (string, bool) {
	prefix, rest, ok := strings.Cut(name, "_")
	if !ok || (prefix != "SWITCHYARD" && prefix != "CONTOUR") {
		return "", false
	}
	switch rest {
	case "NAMESPACE":
		return v.namespace, v.namespace != ""
	case "SERVICE_NAME":
		return v.service, v.service != ""
	case "SERVICE_PORT":
		return v.servicePort, v.service != ""
	}
	return "", false
}

// envoyHeaderValue turns a header value as the user wrote it into the
// Envoy format string that sends it: every "%" is escaped as "%%", except
// around an allowed Envoy command (envoyHeaderCommands, or
// %REQ(header)%), which passes through, and around a variable of vars,
// which is replaced by its (escaped) value. So "50%" stays "50%" on the
// wire instead of having Envoy reject it as an unterminated command.
func envoyHeaderValue(value string, vars headerVars) string {
	if !strings.Contains(value, "%") {
		return value
	}
	var b strings.Builder
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(value[i+1:], '%')
		if end < 0 {
			b.WriteString("%%")
			continue
		}
		cmd := value[i+1 : i+1+end]
		switch v, isVar := vars.lookup(cmd); {
		case isVar:
			b.WriteString(strings.ReplaceAll(v, "%", "%%"))
		case envoyHeaderCommands[cmd] || isReqCommand(cmd):
			b.WriteString("%" + cmd + "%")
		default:
			b.WriteString("%%")
			continue
		}
		i += end + 1
	}
	return b.String()
}

// isReqCommand reports whether cmd is REQ(name), REQ(name?alternative) or
// either with a ":length" suffix, with header names Envoy accepts there
// (optionally a pseudo-header such as :authority).
func isReqCommand(cmd string) bool {
	args, ok := strings.CutPrefix(cmd, "REQ(")
	if !ok {
		return false
	}
	args, length, ok := strings.Cut(args, ")")
	if !ok {
		return false
	}
	if length != "" {
		digits, ok := strings.CutPrefix(length, ":")
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return false
		}
	}
	name, alt, hasAlt := strings.Cut(args, "?")
	return isReqHeaderName(name) && (!hasAlt || isReqHeaderName(alt))
}

func isReqHeaderName(s string) bool {
	s = strings.TrimPrefix(s, ":")
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isNameRune(r) {
			return false
		}
	}
	return true
}

// hostFromHeader returns the header named by a Host value of the form
// %REQ(name)%, which Envoy implements as host_rewrite_header rather than
// as a literal host.
func hostFromHeader(value string) (string, bool) {
	inner, ok := strings.CutPrefix(strings.TrimSpace(value), "%REQ(")
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(inner, ")%")
	if !ok || strings.HasPrefix(name, ":") || !isReqHeaderName(name) {
		return "", false
	}
	return strings.ToLower(name), true
}

// isNameRune reports whether r may appear in the header name of %REQ(name)%.
func isNameRune(r rune) bool {
	return r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}
