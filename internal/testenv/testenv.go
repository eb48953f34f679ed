// Package testenv runs a real kube-apiserver and etcd for tests, with
// Switchyard's CRDs installed, through controller-runtime's envtest.
//
// The binaries are the ones internal/tools/testbin/build.sh builds (`make
// testbin`, which `make test` runs first) into $SWITCHYARD_TESTBIN or
// ~/.cache/switchyard/testbin/k8s-<version>. Start one Env per test
// package, in TestMain:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
//
// Everything listens on 127.0.0.1 only.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchyard-dev/switchyard/examples/deploy"
)

// K8sVersion is the version internal/tools/testbin/build.sh builds.
const K8sVersion = "1.37.2"

// Env is a running API server and etcd with the CRDs installed.
type Env struct {
	// Config is an administrator's (system:masters) client configuration.
	Config *rest.Config
	// Client is a clientset for Config.
	Client kubernetes.Interface
	// Started is how long starting the control plane and installing the
	// CRDs took.
	Started time.Duration

	env     *envtest.Environment
	certDir string
}

// BinDir returns the directory holding kube-apiserver and etcd.
func BinDir() (string, error) {
	if dir := os.Getenv("SWITCHYARD_TESTBIN"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory (set SWITCHYARD_TESTBIN): %w", err)
	}
	return filepath.Join(home, ".cache", "switchyard", "testbin", "k8s-"+K8sVersion), nil
}

// Start starts etcd and kube-apiserver and installs the CRDs of
// examples/deploy/crds.
func Start() (*Env, error) {
	dir, err := BinDir()
	if err != nil {
		return nil, err
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return nil, fmt.Errorf("%w: build the test binaries first with `make testbin` (make test does it)", err)
		}
	}
	// envtest lets these override BinaryAssetsDirectory, even when empty.
	for _, k := range []string{"KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD", "TEST_ASSET_KUBECTL"} {
		_ = os.Unsetenv(k)
	}
	// envtest logs through controller-runtime's logger, which otherwise
	// complains after 30 s that it was never set.
	ctrllog.SetLogger(logr.Discard())

	crds, err := decodeCRDs()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// A certificate directory of our own survives an API server restart:
	// envtest deletes (and regenerates, with a new CA) one it made itself.
	certDir, err := os.MkdirTemp("", "switchyard-testenv-")
	if err != nil {
		return nil, err
	}
	e := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDs:                  crds,
		ErrorIfCRDPathMissing: true,
	}
	e.ControlPlaneStartTimeout = 2 * time.Minute
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") != "" {
		e.ControlPlaneStartTimeout = 0 // envtest reads the variable
	}
	api := e.ControlPlane.GetAPIServer()
	api.CertDir = certDir
	// Bind and advertise 127.0.0.1 only; see the smoke test in
	// internal/tools/testbin for why both settings are needed.
	api.Address = "127.0.0.1"     // SecureServing.Address
	api.Port = strconv.Itoa(port) // SecureServing.Port
	api.Configure().
		Set("advertise-address", "127.0.0.1").
		Set("endpoint-reconciler-type", "none").
		// Close watches on shutdown instead of waiting for the HTTP server to
		// time out on them (60 s), so that StopAPIServer is quick with
		// informers connected.
		Set("shutdown-watch-termination-grace-period", "2s")

	start := time.Now()
	cfg, err := e.Start()
	if err != nil {
		_ = e.Stop()
		_ = os.RemoveAll(certDir)
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		_ = e.Stop()
		_ = os.RemoveAll(certDir)
		return nil, err
	}
	return &Env{Config: cfg, Client: cs, Started: time.Since(start), env: e, certDir: certDir}, nil
}

// Stop stops the API server and etcd and removes their files.
func (e *Env) Stop() error {
	err := e.env.Stop()
	return errors.Join(err, os.RemoveAll(e.certDir))
}

// Main starts an Env for a test package, runs its tests and stops the
// Env; use it as os.Exit(testenv.Main(m, &env)).
func Main(m *testing.M, env **Env) int {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	*env = e
	fmt.Fprintf(os.Stderr, "testenv: kube-apiserver %s and etcd started with the CRDs in %v\n", K8sVersion, e.Started.Round(time.Millisecond))
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
	}
	return code
}

// StopAPIServer stops kube-apiserver alone; etcd keeps running.
func (e *Env) StopAPIServer() error {
	return e.env.ControlPlane.GetAPIServer().Stop()
}

// StartAPIServer starts kube-apiserver again, on the same address and with
// the same certificates, and returns once it is healthy.
func (e *Env) StartAPIServer() error {
	return e.env.ControlPlane.GetAPIServer().Start()
}

// User returns a client configuration authenticated as name, member of
// groups (and system:authenticated), with no other rights than RBAC
// grants them.
func (e *Env) User(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, &rest.Config{QPS: 100, Burst: 200})
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// Kubeconfig writes a kubeconfig file for cfg into dir and returns its
// path, for commands that take --kubeconfig.
func Kubeconfig(cfg *rest.Config, dir string) (string, error) {
	b, err := kubeconfigBytes(cfg)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "kubeconfig")
	return p, os.WriteFile(p, b, 0o600)
}

// Namespace creates a namespace with a name unique to the test and
// deletes it when the test ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	got, err := e.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		err := e.Client.CoreV1().Namespaces().Delete(context.Background(), got.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting namespace %s: %v", got.Name, err)
		}
	})
	return got.Name
}

// EnsureNamespace creates a namespace with a fixed name unless it exists.
func (e *Env) EnsureNamespace(ctx context.Context, name string) error {
	_, err := e.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func decodeCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files := deploy.CRDs()
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range deploy.Names(files) {
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(files[name]), 4096)
		for {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := d.Decode(crd); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("examples/deploy/crds/%s: %w", name, err)
			}
			if crd.Name != "" {
				out = append(out, crd)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("examples/deploy/crds holds no CustomResourceDefinition")
	}
	return out, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// kubeconfigBytes renders a client configuration that authenticates with
// a client certificate as a kubeconfig file.
func kubeconfigBytes(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testenv"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: "user"}
	kc.CurrentContext = "testenv"
	return clientcmd.Write(*kc)
}

// WaitFor polls cond until it holds, failing the test when timeout passes
// first: tests against an API server wait for effects, never sleep.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Lazy starts an Env on first use, so that a package whose tests mostly
// need no API server starts one only when such a test runs:
//
//	var kube testenv.Lazy
//
//	func TestMain(m *testing.M) { code := m.Run(); kube.Stop(); os.Exit(code) }
//
//	func TestSomething(t *testing.T) { env := kube.Get(t); ... }
type Lazy struct {
	once sync.Once
	env  *Env
	err  error
}

// Get returns the Env, starting it the first time; a failure to start
// fails every test that asks.
func (l *Lazy) Get(t testing.TB) *Env {
	t.Helper()
	l.once.Do(func() {
		l.env, l.err = Start()
		if l.err == nil {
			fmt.Fprintf(os.Stderr, "testenv: kube-apiserver %s and etcd started with the CRDs in %v\n", K8sVersion, l.env.Started.Round(time.Millisecond))
		}
	})
	if l.err != nil {
		t.Fatalf("testenv: %v", l.err)
	}
	return l.env
}

// Stop stops the Env if it was started.
func (l *Lazy) Stop() {
	if l.env != nil {
		if err := l.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
		}
	}
}
