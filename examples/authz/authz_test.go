package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_auth_v3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/switchyard-dev/switchyard/internal/testutil/logbuf"
	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

const testTokens = `# holders of the demo tokens
s3cret-alice alice

s3cret-bob   bob
anonymous-token
`

func writeTokens(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.txt")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServer runs serve on a loopback port and returns a client of it
// over real gRPC.
func startServer(t *testing.T, cfg config, creds credentials.TransportCredentials) envoy_service_auth_v3.AuthorizationClient {
	t.Helper()
	return startLogging(t, cfg, creds, io.Discard)
}

// startLogging is startServer with the server's log written to logs.
func startLogging(t *testing.T, cfg config, creds credentials.TransportCredentials, logs io.Writer) envoy_service_auth_v3.AuthorizationClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, lis, cfg, slog.New(slog.NewTextHandler(logs, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return envoy_service_auth_v3.NewAuthorizationClient(cc)
}

// request is what Envoy's ext_authz filter would send for one request.
type request struct {
	headers map[string]string
	context map[string]string
	body    string
	rawBody []byte
}

func (r request) proto() *envoy_service_auth_v3.CheckRequest {
	return &envoy_service_auth_v3.CheckRequest{Attributes: &envoy_service_auth_v3.AttributeContext{
		Request: &envoy_service_auth_v3.AttributeContext_Request{Http: &envoy_service_auth_v3.AttributeContext_HttpRequest{
			Method: "POST", Host: "shop.example.com", Path: "/api/orders",
			Headers: r.headers, Body: r.body, RawBody: r.rawBody,
		}},
		ContextExtensions: r.context,
	}}
}

func check(t *testing.T, c envoy_service_auth_v3.AuthorizationClient, r request) *envoy_service_auth_v3.CheckResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Check(ctx, r.proto())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return resp
}

// header finds a header in a response's list, "" when absent. Every
// header the server sets must replace what the request had.
func header(t *testing.T, opts []*envoy_config_core_v3.HeaderValueOption, name string) string {
	t.Helper()
	for _, o := range opts {
		if o.GetHeader().GetKey() == name {
			if o.GetAppendAction() != envoy_config_core_v3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD {
				t.Errorf("header %s is appended, not overwritten: a client could send its own", name)
			}
			return o.GetHeader().GetValue()
		}
	}
	return ""
}

// outcome is what a check decided, as Envoy would apply it.
type outcome struct {
	// status is 200 when allowed, else the HTTP status of the denial.
	status  int
	subject string
	denied  string
	// challenge is the WWW-Authenticate header of a 401.
	challenge bool
}

func outcomeOf(t *testing.T, resp *envoy_service_auth_v3.CheckResponse) outcome {
	t.Helper()
	if ok := resp.GetOkResponse(); ok != nil {
		if resp.GetStatus().GetCode() != int32(code.Code_OK) {
			t.Errorf("an OK response with gRPC status %d: Envoy would deny it", resp.GetStatus().GetCode())
		}
		return outcome{status: 200, subject: header(t, ok.GetHeaders(), HeaderSubject)}
	}
	d := resp.GetDeniedResponse()
	if resp.GetStatus().GetCode() == int32(code.Code_OK) {
		t.Error("a denial with gRPC status OK: Envoy would allow it")
	}
	if reason := header(t, d.GetHeaders(), HeaderDenied); !strings.Contains(d.GetBody(), reason) || reason == "" {
		t.Errorf("body %q and %s %q should both say why", d.GetBody(), HeaderDenied, reason)
	}
	return outcome{
		status:    int(d.GetStatus().GetCode()),
		denied:    header(t, d.GetHeaders(), HeaderDenied),
		challenge: strings.HasPrefix(header(t, d.GetHeaders(), "www-authenticate"), "Bearer "),
	}
}

// TestCheck calls Check over gRPC for each way a request can be allowed or
// denied.
func TestCheck(t *testing.T) {
	c := startServer(t, config{
		tokens:  writeTokens(t, testTokens),
		headers: []HeaderRule{{Name: "x-api-key", Value: "demo-key"}},
	}, nil)
	cases := map[string]struct {
		headers map[string]string
		want    outcome
	}{
		"listed token": {
			map[string]string{"authorization": "Bearer s3cret-alice"},
			outcome{status: 200, subject: "alice"},
		},
		"the scheme is case insensitive": {
			map[string]string{"authorization": "bearer s3cret-bob"},
			outcome{status: 200, subject: "bob"},
		},
		"a token without a name is named by its line": {
			map[string]string{"authorization": "Bearer anonymous-token"},
			outcome{status: 200, subject: "line-5"},
		},
		"the client's own subject is replaced": {
			map[string]string{"authorization": "Bearer s3cret-alice", HeaderSubject: "root"},
			outcome{status: 200, subject: "alice"},
		},
		"header allow-list": {
			map[string]string{"x-api-key": "demo-key"},
			outcome{status: 200, subject: "header:x-api-key"},
		},
		"no credentials": {
			map[string]string{"accept": "*/*"},
			outcome{status: 401, denied: "no credentials: send Authorization: Bearer <token>", challenge: true},
		},
		"wrong header value": {
			map[string]string{"x-api-key": "demo-key2"},
			outcome{status: 401, denied: "no credentials: send Authorization: Bearer <token>", challenge: true},
		},
		"not a bearer token": {
			map[string]string{"authorization": "Basic YWxpY2U6czNjcmV0"},
			outcome{status: 401, denied: "the Authorization header is not a bearer token", challenge: true},
		},
		"empty bearer token": {
			map[string]string{"authorization": "Bearer "},
			outcome{status: 401, denied: "the Authorization header is not a bearer token", challenge: true},
		},
		"unlisted token": {
			map[string]string{"authorization": "Bearer s3cret-mallory"},
			outcome{status: 403, denied: "the bearer token is not accepted"},
		},
		"a comment is not a token": {
			map[string]string{"authorization": "Bearer #"},
			outcome{status: 403, denied: "the bearer token is not accepted"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := outcomeOf(t, check(t, c, request{headers: tc.headers})); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestCheckHeaderMap reads the headers from header_map, which Envoy sends
// instead of headers when its filter sets encode_raw_headers.
func TestCheckHeaderMap(t *testing.T) {
	c := startServer(t, config{tokens: writeTokens(t, testTokens)}, nil)
	req := request{}.proto()
	req.Attributes.Request.Http.HeaderMap = &envoy_config_core_v3.HeaderMap{Headers: []*envoy_config_core_v3.HeaderValue{
		{Key: "Authorization", RawValue: []byte("Bearer s3cret-bob")},
	}}
	resp, err := c.Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomeOf(t, resp); got.status != 200 || got.subject != "bob" {
		t.Fatalf("got %+v", got)
	}
}

// TestCheckEchoesContext sends context extensions, as an HTTPProxy's
// authPolicy.context produces them, and finds them in x-authz-context on
// both an allowed and a denied answer.
func TestCheckEchoesContext(t *testing.T) {
	c := startServer(t, config{tokens: writeTokens(t, testTokens)}, nil)
	ctxExt := map[string]string{"scope": "api", "app": "shop", "note": "a&b=c"}
	const want = "app=shop&note=a%26b%3Dc&scope=api"

	allowed := check(t, c, request{headers: map[string]string{"authorization": "Bearer s3cret-alice"}, context: ctxExt})
	if got := header(t, allowed.GetOkResponse().GetResponseHeadersToAdd(), HeaderContext); got != want {
		t.Errorf("allowed: %s = %q, want %q", HeaderContext, got, want)
	}
	denied := check(t, c, request{context: ctxExt})
	if got := header(t, denied.GetDeniedResponse().GetHeaders(), HeaderContext); got != want {
		t.Errorf("denied: %s = %q, want %q", HeaderContext, got, want)
	}
	none := check(t, c, request{headers: map[string]string{"authorization": "Bearer s3cret-alice"}})
	if got := header(t, none.GetOkResponse().GetResponseHeadersToAdd(), HeaderContext); got != "" {
		t.Errorf("without context: %s = %q, want empty", HeaderContext, got)
	}
}

// TestCheckSeesBody sends the body as withRequestBody makes Envoy send it:
// as a string, or as bytes with packAsBytes.
func TestCheckSeesBody(t *testing.T) {
	c := startServer(t, config{tokens: writeTokens(t, testTokens)}, nil)
	auth := map[string]string{"authorization": "Bearer s3cret-alice"}
	cases := map[string]struct {
		req  request
		want string
	}{
		"body":                   {request{headers: auth, body: `{"order": 42}`}, "13"},
		"raw body (packAsBytes)": {request{headers: auth, rawBody: []byte{0, 1, 2, 0xff}}, "4"},
		"no body":                {request{headers: auth}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp := check(t, c, tc.req)
			if got := header(t, resp.GetOkResponse().GetResponseHeadersToAdd(), HeaderBodyBytes); got != tc.want {
				t.Errorf("%s = %q, want %q", HeaderBodyBytes, got, tc.want)
			}
		})
	}
	denied := check(t, c, request{body: "secret=1"})
	if got := header(t, denied.GetDeniedResponse().GetHeaders(), HeaderBodyBytes); got != "8" {
		t.Errorf("denied: %s = %q, want 8", HeaderBodyBytes, got)
	}
}

// TestTokensReloadedWhileServing replaces the tokens file under a running
// server, as Kubernetes updates a mounted Secret (a rename): the new tokens
// take over within a few --reload intervals, and a broken file keeps the
// last good ones.
func TestTokensReloadedWhileServing(t *testing.T) {
	path := writeTokens(t, "old-token old\n")
	logs := &logbuf.Buffer{}
	c := startLogging(t, config{tokens: path, reload: 10 * time.Millisecond}, nil, logs)
	status := func(token string) int {
		return outcomeOf(t, check(t, c, request{headers: map[string]string{"authorization": "Bearer " + token}})).status
	}
	if got := status("old-token"); got != 200 {
		t.Fatalf("old-token: %d before the change", got)
	}
	replaceFile(t, path, "new-token new\n")
	deadline := time.Now().Add(30 * time.Second)
	for status("new-token") != 200 {
		if time.Now().After(deadline) {
			t.Fatal("the new tokens file was not picked up within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := status("old-token"); got != 403 {
		t.Fatalf("old-token: %d after the change, want 403", got)
	}
	replaceFile(t, path, "too many fields here\n")
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "keeping the previous tokens") {
		if time.Now().After(deadline) {
			t.Fatal("the broken tokens file was never read")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := status("new-token"); got != 200 {
		t.Fatalf("new-token: %d after a broken file, want the last good tokens kept", got)
	}
	if _, err := LoadTokenFile(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("loading the broken file: %v, want an error naming line 1", err)
	}
}

// replaceFile swaps in new content with a rename, so that a reader never
// sees a half-written file.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestServeTLS checks over TLS, as an ExtensionService with protocol h2 or
// tls reaches the server: the handshake offers ALPN h2, which grpc-go
// clients (and Envoy's h2 clusters) require.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	pki, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: []string{"authz.auth.svc"}, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for f, b := range map[string][]byte{certFile: pki.ServerCert, keyFile: pki.ServerKey} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pki.CACert)
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "authz.auth.svc", MinVersion: tls.VersionTLS12})
	c := startServer(t, config{headers: []HeaderRule{{Name: "x-api-key", Value: "k"}}, tlsCert: certFile, tlsKey: keyFile}, creds)
	if got := outcomeOf(t, check(t, c, request{headers: map[string]string{"x-api-key": "k"}})); got.status != 200 {
		t.Fatalf("over TLS: %+v", got)
	}
}

func TestParseFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		err  string
	}{
		"defaults with tokens": {[]string{"--tokens", "t.txt"}, ""},
		"header rules":         {[]string{"--allow-header", "X-Api-Key=a", "--allow-header", "x-team=b"}, ""},
		"nothing to allow":     {nil, "nothing would ever be allowed"},
		"rule without a value": {[]string{"--allow-header", "x-api-key="}, "want NAME=VALUE"},
		"rule without a name":  {[]string{"--allow-header", "=v"}, "want NAME=VALUE"},
		"cert without a key":   {[]string{"--tokens", "t", "--tls-cert", "c.pem"}, "go together"},
		"negative reload":      {[]string{"--tokens", "t", "--reload", "-1s"}, "must not be negative"},
		"a stray argument":     {[]string{"--tokens", "t", "extra"}, "unexpected arguments"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := parseFlags(tc.args, io.Discard)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if tc.err == "" && cfg.listen != "127.0.0.1:9001" {
				t.Errorf("listen = %q, want the loopback default", cfg.listen)
			}
		})
	}
	cfg, _ := parseFlags([]string{"--allow-header", "X-Api-Key=a=b"}, io.Discard)
	if want := []HeaderRule{{Name: "x-api-key", Value: "a=b"}}; len(cfg.headers) != 1 || cfg.headers[0] != want[0] {
		t.Errorf("headers = %+v, want %+v (name lowercased, value kept whole)", cfg.headers, want)
	}
}
