// Package smoke proves that the kube-apiserver and etcd built by
// internal/tools/testbin/build.sh work under controller-runtime's envtest.
//
// Run it with:
//
//	internal/tools/testbin/build.sh
//	cd internal/tools/testbin/smoke && go test -mod=readonly -count=1 -v ./...
//
// The binaries are taken from $SWITCHYARD_TESTBIN, or from the default cache
// directory used by build.sh.
package smoke

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const k8sVersion = "1.37.2"

// testbinDir mirrors the output directory logic of ../build.sh.
func testbinDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("SWITCHYARD_TESTBIN"); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatalf("cannot determine home directory (set SWITCHYARD_TESTBIN): %v", err)
	}
	return filepath.Join(home, ".cache", "switchyard", "testbin", "k8s-"+k8sVersion)
}

// freeLoopbackPort returns a TCP port that is currently free on 127.0.0.1.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1: %v", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func TestEnvtestSmoke(t *testing.T) {
	dir := testbinDir(t)
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			t.Fatalf("%v\nbuild the test binaries first: internal/tools/testbin/build.sh", err)
		}
	}

	// envtest lets these variables override BinaryAssetsDirectory (even when
	// set to ""); make sure we test exactly the binaries in dir.
	for _, k := range []string{"KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD", "TEST_ASSET_KUBECTL"} {
		t.Setenv(k, "") // restores the original value after the test
		os.Unsetenv(k)
	}

	env := &envtest.Environment{BinaryAssetsDirectory: dir}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		// The default (20s per component) is tight on a loaded 2-core CI machine.
		env.ControlPlaneStartTimeout = 2 * time.Minute
	}

	// Serve on 127.0.0.1 only (envtest passes this as --bind-address and uses
	// it for the health check, serving certificate and rest.Config). Left
	// unset, envtest would use whatever "localhost" resolves to. Both Address
	// and Port must be set, or envtest replaces both.
	apiServer := env.ControlPlane.GetAPIServer()
	apiServer.SecureServing.Address = "127.0.0.1"
	apiServer.SecureServing.Port = freeLoopbackPort(t)
	// With a loopback bind address the API server derives its advertise
	// address from the host's default route and refuses to start on hosts
	// without one (e.g. a network namespace with only lo). Advertise
	// 127.0.0.1 instead; loopback advertise addresses are only accepted with
	// the "none" endpoint reconciler (the default/kubernetes Endpoints then
	// stay empty, which nothing under envtest needs).
	apiServer.Configure().
		Set("advertise-address", "127.0.0.1").
		Set("endpoint-reconciler-type", "none")

	start := time.Now()
	cfg, err := env.Start()
	startup := time.Since(start)
	if err != nil {
		t.Fatalf("envtest start: %v", err)
	}
	t.Cleanup(func() {
		stopStart := time.Now()
		if err := env.Stop(); err != nil {
			t.Errorf("envtest stop: %v", err)
		}
		t.Logf("envtest stopped in %s", time.Since(stopStart).Round(time.Millisecond))
	})
	t.Logf("envtest started in %s (API server %s)", startup.Round(time.Millisecond), cfg.Host)

	if want := filepath.Join(dir, "kube-apiserver"); apiServer.Path != want {
		t.Errorf("kube-apiserver path = %q, want %q", apiServer.Path, want)
	}
	if want := filepath.Join(dir, "etcd"); env.ControlPlane.Etcd.Path != want {
		t.Errorf("etcd path = %q, want %q", env.ControlPlane.Etcd.Path, want)
	}
	if !strings.HasPrefix(cfg.Host, "https://127.0.0.1:") {
		t.Errorf("API server host = %q, want https://127.0.0.1:<port>", cfg.Host)
	}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ver, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	t.Logf("server version %s (%s)", ver.GitVersion, ver.GoVersion)
	if ver.GitVersion != "v"+k8sVersion {
		t.Errorf("server gitVersion = %q, want %q", ver.GitVersion, "v"+k8sVersion)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const nsName = "switchyard-smoke"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: nsName, Labels: map[string]string{"app": "switchyard"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(nsName).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "routes", Namespace: nsName},
		Data:       map[string]string{"route": "example.com -> backend:8080"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}

	ns, err := cs.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace: %v", err)
	}
	if ns.Labels["app"] != "switchyard" || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("namespace = labels %v phase %q, want app=switchyard and Active", ns.Labels, ns.Status.Phase)
	}
	cm, err := cs.CoreV1().ConfigMaps(nsName).Get(ctx, "routes", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get configmap: %v", err)
	}
	if got := cm.Data["route"]; got != "example.com -> backend:8080" || len(cm.Data) != 1 {
		t.Errorf("configmap data = %v, want route=example.com -> backend:8080", cm.Data)
	}
	if cm.UID == "" || cm.ResourceVersion == "" {
		t.Errorf("configmap was not persisted: uid=%q resourceVersion=%q", cm.UID, cm.ResourceVersion)
	}

	checkLoopbackOnly(t, map[string]string{
		"kube-apiserver": apiServer.Path,
		"etcd":           env.ControlPlane.Etcd.Path,
	})
}

// checkLoopbackOnly asserts that every listening TCP socket of the control
// plane processes (children of this test process) is bound to 127.0.0.1.
// It inspects /proc and is therefore Linux-only.
func checkLoopbackOnly(t *testing.T, bins map[string]string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Logf("skipping listening-socket check on %s", runtime.GOOS)
		return
	}
	listening, err := listeningSockets()
	if err != nil {
		t.Logf("skipping listening-socket check: %v", err)
		return
	}
	pids, err := childPIDs(os.Getpid())
	if err != nil {
		t.Fatalf("list child processes: %v", err)
	}
	found := map[string]bool{}
	for _, pid := range pids {
		argv0, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		path, _, _ := strings.Cut(string(argv0), "\x00")
		for name, bin := range bins {
			if path != bin {
				continue
			}
			found[name] = true
			addrs := socketAddrs(t, pid, listening)
			if len(addrs) == 0 {
				t.Errorf("%s (pid %d): no listening TCP sockets found", name, pid)
			}
			for _, a := range addrs {
				if !a.IP.Equal(net.IPv4(127, 0, 0, 1)) {
					t.Errorf("%s (pid %d) listens on %s, want 127.0.0.1 only", name, pid, a)
				}
			}
			t.Logf("%s (pid %d) listens on %v", name, pid, addrs)
		}
	}
	for name := range bins {
		if !found[name] {
			t.Errorf("%s: process not found among children of pid %d", name, os.Getpid())
		}
	}
}

func childPIDs(parent int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Format: pid (comm) state ppid ...; comm may contain spaces.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat)[i+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// listeningSockets maps socket inode -> local address for every TCP socket in
// LISTEN state in this network namespace.
func listeningSockets() (map[string]*net.TCPAddr, error) {
	out := map[string]*net.TCPAddr{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(file)
		if err != nil {
			if file == "/proc/net/tcp6" && os.IsNotExist(err) {
				continue // IPv6 disabled
			}
			return nil, err
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for _, line := range lines[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A == TCP_LISTEN
				continue
			}
			addr, err := parseProcAddr(f[1])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			out[f[9]] = addr
		}
	}
	return out, nil
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or the 32-hex-digit IPv6 form;
// the address is stored as host-endian (little-endian here) 32-bit words.
func parseProcAddr(s string) (*net.TCPAddr, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", s)
	}
	return &net.TCPAddr{IP: net.IP(raw), Port: int(port)}, nil
}

func socketAddrs(t *testing.T, pid int, listening map[string]*net.TCPAddr) []*net.TCPAddr {
	t.Helper()
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		t.Fatalf("read %s: %v", fdDir, err)
	}
	var addrs []*net.TCPAddr
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue
		}
		inode, ok := strings.CutPrefix(target, "socket:[")
		if !ok {
			continue
		}
		if a, ok := listening[strings.TrimSuffix(inode, "]")]; ok {
			addrs = append(addrs, a)
		}
	}
	return addrs
}
