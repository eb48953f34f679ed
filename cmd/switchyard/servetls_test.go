package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/switchyard-dev/switchyard/internal/server"
)

// checkTLSFlags parses serve's TLS flags and runs their check, returning
// the error and what was logged.
func checkTLSFlags(t *testing.T, xdsAddress string, args ...string) (*server.Config, string, error) {
	t.Helper()
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	var logs bytes.Buffer
	cfg := &server.Config{XDSAddress: xdsAddress, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	addServeTLSFlags(f, cfg)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	err := checkServeTLS(f, cfg)
	return cfg, logs.String(), err
}

// TestServeRefusesClearTextOffLoopback is the rule: xDS in clear text is
// served on loopback only, unless --insecure is given, which logs a
// warning; with TLS any address is fine.
func TestServeRefusesClearTextOffLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:8001", "localhost:8001", "[::1]:8001"} {
		if _, logs, err := checkTLSFlags(t, addr); err != nil || logs != "" {
			t.Errorf("%s: %v %s", addr, err, logs)
		}
	}
	for _, addr := range []string{"0.0.0.0:8001", ":8001", "10.0.0.7:8001", "[::]:8001"} {
		_, _, err := checkTLSFlags(t, addr)
		if err == nil || !strings.Contains(err.Error(), "--insecure") {
			t.Errorf("%s without TLS: %v", addr, err)
		}
		if _, logs, err := checkTLSFlags(t, addr, "--insecure"); err != nil || !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "clear text") {
			t.Errorf("%s with --insecure: err %v, logs %q", addr, err, logs)
		}
	}

	dir := t.TempDir()
	if _, errOut, code := run(t, "certgen", "--out", dir); code != 0 {
		t.Fatal(errOut)
	}
	tlsArgs := []string{"--xds-tls-cert", filepath.Join(dir, "server.crt"), "--xds-tls-key", filepath.Join(dir, "server.key"), "--xds-tls-ca", filepath.Join(dir, "ca.crt")}
	cfg, logs, err := checkTLSFlags(t, "0.0.0.0:8001", tlsArgs...)
	if err != nil || logs != "" || len(cfg.GRPCOptions) != 1 {
		t.Errorf("with TLS: err %v, logs %q, %d gRPC options", err, logs, len(cfg.GRPCOptions))
	}
	if _, _, err := checkTLSFlags(t, "127.0.0.1:8001", tlsArgs[:2]...); err == nil || !strings.Contains(err.Error(), "--xds-tls-key") {
		t.Errorf("a certificate alone: %v", err)
	}
	if _, _, err := checkTLSFlags(t, "127.0.0.1:8001", "--xds-tls-cert", "nope", "--xds-tls-key", "nope", "--xds-tls-ca", "nope"); err == nil {
		t.Error("missing files were accepted")
	}
}

// TestServeCommandRefuses runs the real command line: it must stop before
// listening, with exit status 2.
func TestServeCommandRefuses(t *testing.T) {
	_, errOut, code := run(t, "serve", "--source", "../../examples/quickstart", "--xds-address", "0.0.0.0:0", "--admin-address", "")
	if code != 2 || !strings.Contains(errOut, "--insecure") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
