package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_auth_v3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	envoy_type_v3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/status"
)

// Headers the server sets. The subject goes upstream, to the backend, and
// replaces any value the client sent; the debugging headers go back to the
// client on every answer, allowed or not.
const (
	// HeaderSubject names who was allowed: a token's name from the tokens
	// file, or "header:<name>" for a header rule.
	HeaderSubject = "x-authz-subject"
	// HeaderContext echoes the check's context extensions (the virtual
	// host's and route's authPolicy.context, merged), URL-query encoded and
	// sorted by key.
	HeaderContext = "x-authz-context"
	// HeaderBodyBytes is how many body bytes the check carried, set only
	// when Envoy sent a body (virtualhost.authorization.withRequestBody).
	HeaderBodyBytes = "x-authz-body-bytes"
	// HeaderDenied says why a request was refused.
	HeaderDenied = "x-authz-denied"
)

// Authorizer implements envoy.service.auth.v3.Authorization: it allows a
// request that matches a header rule or carries a bearer token listed in
// the tokens file, and denies every other one, 401 without credentials and
// 403 with a token it does not know.
type Authorizer struct {
	envoy_service_auth_v3.UnimplementedAuthorizationServer

	// Tokens may be nil: then only header rules allow.
	Tokens  *TokenFile
	Headers []HeaderRule
	Log     *slog.Logger
}

// HeaderRule allows a request whose header Name (lowercase, as Envoy sends
// it) has exactly Value. A client chooses its own headers, so a rule is a
// shared secret, such as an API key, not an identity.
type HeaderRule struct {
	Name  string
	Value string
}

// ParseHeaderRule reads "name=value".
func ParseHeaderRule(s string) (HeaderRule, error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	if !ok || name == "" || value == "" {
		return HeaderRule{}, fmt.Errorf("header rule %q: want NAME=VALUE with both set", s)
	}
	return HeaderRule{Name: name, Value: value}, nil
}

func (r HeaderRule) matches(headers map[string]string) bool {
	v, ok := headers[r.Name]
	if !ok {
		return false
	}
	// Compare digests in constant time, so that the time taken says
	// nothing about how much of a guess was right.
	a, b := sha256.Sum256([]byte(v)), sha256.Sum256([]byte(r.Value))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// decision is the outcome of one check.
type decision struct {
	allowed bool
	// subject is who was allowed.
	subject string
	// status (401 or 403) and reason describe a denial.
	status envoy_type_v3.StatusCode
	reason string
}

// Check answers one authorization request from Envoy.
func (a *Authorizer) Check(_ context.Context, req *envoy_service_auth_v3.CheckRequest) (*envoy_service_auth_v3.CheckResponse, error) {
	h := req.GetAttributes().GetRequest().GetHttp()
	d := a.decide(requestHeaders(h))
	ctxHeader := contextHeader(req.GetAttributes().GetContextExtensions())
	debug := []*envoy_config_core_v3.HeaderValueOption{setHeader(HeaderContext, ctxHeader)}
	n := len(h.GetBody()) + len(h.GetRawBody())
	if n > 0 {
		debug = append(debug, setHeader(HeaderBodyBytes, strconv.Itoa(n)))
	}
	if a.Log != nil {
		a.Log.Info("check", "method", h.GetMethod(), "host", h.GetHost(), "path", h.GetPath(),
			"allowed", d.allowed, "subject", d.subject, "status", int(d.status), "reason", d.reason,
			"context", ctxHeader, "bodyBytes", n)
	}
	if d.allowed {
		return allow(d.subject, debug), nil
	}
	return deny(d, debug), nil
}

// decide applies the rules: a matching header rule first, then the bearer
// token.
func (a *Authorizer) decide(headers map[string]string) decision {
	for _, r := range a.Headers {
		if r.matches(headers) {
			return decision{allowed: true, subject: "header:" + r.Name}
		}
	}
	auth, ok := headers["authorization"]
	if !ok {
		return decision{status: envoy_type_v3.StatusCode_Unauthorized, reason: "no credentials: send Authorization: Bearer <token>"}
	}
	token, ok := bearerToken(auth)
	if !ok {
		return decision{status: envoy_type_v3.StatusCode_Unauthorized, reason: "the Authorization header is not a bearer token"}
	}
	if a.Tokens != nil {
		if name, ok := a.Tokens.Lookup(token); ok {
			return decision{allowed: true, subject: name}
		}
	}
	return decision{status: envoy_type_v3.StatusCode_Forbidden, reason: "the bearer token is not accepted"}
}

// bearerToken extracts the token of "Bearer <token>" (the scheme is case
// insensitive, RFC 7235).
func bearerToken(v string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false
	}
	return token, true
}

// requestHeaders returns the request's headers by lowercase name. Envoy
// sends them in headers, or in header_map when its ext_authz filter sets
// encode_raw_headers; repeated headers are joined with ",".
func requestHeaders(h *envoy_service_auth_v3.AttributeContext_HttpRequest) map[string]string {
	out := make(map[string]string, len(h.GetHeaders()))
	for k, v := range h.GetHeaders() {
		out[strings.ToLower(k)] = v
	}
	for _, hv := range h.GetHeaderMap().GetHeaders() {
		k := strings.ToLower(hv.GetKey())
		v := hv.GetValue()
		if raw := hv.GetRawValue(); len(raw) > 0 {
			v = string(raw)
		}
		if prev, ok := out[k]; ok {
			v = prev + "," + v
		}
		out[k] = v
	}
	return out
}

// contextHeader encodes context extensions as a sorted query string, which
// is unambiguous whatever the keys and values hold.
func contextHeader(ext map[string]string) string {
	q := url.Values{}
	for k, v := range ext {
		q.Set(k, v)
	}
	return q.Encode()
}

func allow(subject string, debug []*envoy_config_core_v3.HeaderValueOption) *envoy_service_auth_v3.CheckResponse {
	return &envoy_service_auth_v3.CheckResponse{
		Status: &status.Status{Code: int32(code.Code_OK)},
		HttpResponse: &envoy_service_auth_v3.CheckResponse_OkResponse{OkResponse: &envoy_service_auth_v3.OkHttpResponse{
			Headers:              []*envoy_config_core_v3.HeaderValueOption{setHeader(HeaderSubject, subject)},
			ResponseHeadersToAdd: debug,
		}},
	}
}

func deny(d decision, debug []*envoy_config_core_v3.HeaderValueOption) *envoy_service_auth_v3.CheckResponse {
	grpcCode := code.Code_PERMISSION_DENIED
	headers := append([]*envoy_config_core_v3.HeaderValueOption{setHeader(HeaderDenied, d.reason)}, debug...)
	if d.status == envoy_type_v3.StatusCode_Unauthorized {
		grpcCode = code.Code_UNAUTHENTICATED
		headers = append(headers, setHeader("www-authenticate", `Bearer realm="switchyard-authz-example"`))
	}
	return &envoy_service_auth_v3.CheckResponse{
		Status: &status.Status{Code: int32(grpcCode), Message: d.reason},
		HttpResponse: &envoy_service_auth_v3.CheckResponse_DeniedResponse{DeniedResponse: &envoy_service_auth_v3.DeniedHttpResponse{
			Status:  &envoy_type_v3.HttpStatus{Code: d.status},
			Headers: headers,
			Body:    d.reason + "\n",
		}},
	}
}

// setHeader replaces a header, so that a client cannot smuggle in its own
// value next to the server's.
func setHeader(name, value string) *envoy_config_core_v3.HeaderValueOption {
	return &envoy_config_core_v3.HeaderValueOption{
		Header:       &envoy_config_core_v3.HeaderValue{Key: name, Value: value},
		AppendAction: envoy_config_core_v3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}
