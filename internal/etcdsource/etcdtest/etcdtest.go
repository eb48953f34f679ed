// Package etcdtest runs a real etcd server for tests: the binary `make
// testbin` builds next to kube-apiserver (see internal/testenv), on
// 127.0.0.1 ports, with its data in the test's temporary directory. A
// test can stop and start it again on the same ports and data, as an
// operator's restart would.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/switchyard-dev/switchyard/internal/testenv"
)

// Server is a running etcd.
type Server struct {
	// Endpoint is the client URL, http(s)://127.0.0.1:PORT.
	Endpoint string

	t       testing.TB
	tls     *TLSFiles
	bin     string
	args    []string
	logPath string
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
}

// TLSFiles are PEM files for StartTLS: the CA that signed both
// certificates, the server's, and a client's for the Server's own client.
type TLSFiles struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// Start runs etcd until the test ends. It fails the test when the binary
// is missing, as internal/testenv does: build it with `make testbin`.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, nil)
}

// StartTLS runs etcd serving clients over TLS and requiring a client
// certificate signed by the CA (--client-cert-auth).
func StartTLS(t testing.TB, f TLSFiles) *Server {
	t.Helper()
	return start(t, &f)
}

func start(t testing.TB, tf *TLSFiles) *Server {
	t.Helper()
	dir, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "etcd")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: build the test binaries first with `make testbin` (make test does it)", err)
	}
	clientPort, peerPort := freePort(t), freePort(t)
	data := t.TempDir()
	scheme := "http"
	var extraArgs []string
	if tf != nil {
		scheme = "https"
		extraArgs = []string{"--cert-file", tf.ServerCert, "--key-file", tf.ServerKey, "--trusted-ca-file", tf.CA, "--client-cert-auth"}
	}
	client := scheme + "://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	s := &Server{
		Endpoint: client,
		t:        t,
		tls:      tf,
		bin:      bin,
		logPath:  filepath.Join(data, "etcd.log"),
		args: append([]string{
			"--name", "test",
			"--data-dir", filepath.Join(data, "data"),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "test=" + peer,
			"--log-level", "warn",
			// Without fsync each write costs microseconds, not a disk
			// flush: the tests measure Switchyard, not the disk.
			"--unsafe-no-fsync",
		}, extraArgs...),
	}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Restart starts etcd again (after Stop) on the same ports and data, and
// waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		s.t.Fatalf("starting etcd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	if err := s.waitReady(exited); err != nil {
		log, _ := os.ReadFile(s.logPath)
		s.t.Fatalf("etcd did not become ready: %v\n%s", err, log)
	}
}

func (s *Server) waitReady(exited <-chan struct{}) error {
	c := s.client()
	defer c.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "health")
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("etcd exited")
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops etcd (SIGTERM, then SIGKILL after 10s) and waits for it.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Client returns a new client of the server, closed when the test ends.
func (s *Server) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	c := s.client()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (s *Server) client() *clientv3.Client {
	cfg := clientv3.Config{Endpoints: []string{s.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if s.tls != nil {
		tc, err := (transport.TLSInfo{TrustedCAFile: s.tls.CA, CertFile: s.tls.ClientCert, KeyFile: s.tls.ClientKey}).ClientConfig()
		if err != nil {
			s.t.Fatal(err)
		}
		cfg.TLS = tc
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		s.t.Fatal(err) // only for a bad configuration, which this is not
	}
	return c
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
