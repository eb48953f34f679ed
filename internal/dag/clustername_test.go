package dag

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// benchClusterSpec is a cluster as a typical route makes it: three
// weighted backends, a health check and an idle timeout.
func benchClusterSpec() ClusterSpec {
	idle := 90 * time.Second
	return ClusterSpec{
		Backends: []Backend{
			{Service: types.NamespacedName{Namespace: "team-0042", Name: "checkout-api"}, Port: 8080, Weight: 60},
			{Service: types.NamespacedName{Namespace: "team-0042", Name: "checkout-canary"}, Port: 8080, Weight: 30},
			{Service: types.NamespacedName{Namespace: "team-0042", Name: "checkout-legacy"}, Port: 80, Weight: 10},
		},
		LoadBalancer: LBWeightedLeastRequest,
		HealthCheck: &HealthCheck{
			Path: "/healthz", Host: "checkout.example.com",
			Interval: 5 * time.Second, Timeout: 2 * time.Second,
			UnhealthyThreshold: 3, HealthyThreshold: 2,
		},
		IdleConnectionTimeout: &idle,
	}
}

// BenchmarkClusterName names one realistic spec: the builder names every
// cluster of every route this way.
func BenchmarkClusterName(b *testing.B) {
	spec := benchClusterSpec()
	b.ReportAllocs()
	for b.Loop() {
		_ = clusterName(spec)
	}
}

// jsonTestStrings are the strings the tests below draw from: plain ones,
// and every class of character encoding/json escapes or replaces.
var jsonTestStrings = []string{
	"", "a", "team-0042", "checkout-api", "/", "+",
	`"`, `\`, `<`, `>`, `&`, `</script>&amp;`,
	"\x00", "\x01\x1f", "\x7f", "\b\f\n\r\t",
	"\u2028", "\u2029", "a\u2028b\u2029c",
	"\xff", "\xe2\x80", "a\xc3", "\xed\xa0\x80", "é✓𝄞", "\ufffd",
	"a-namespace-long-enough-that-the-readable-prefix-is-cut",
}

// randomJSONString joins one to three of jsonTestStrings.
func randomJSONString(r *rand.Rand) string {
	var sb strings.Builder
	for range 1 + r.Intn(3) {
		sb.WriteString(jsonTestStrings[r.Intn(len(jsonTestStrings))])
	}
	return sb.String()
}

// fillRandom sets v, and everything it holds, to random values: strings
// from jsonTestStrings, integers small and at their limits, nil or set
// pointers, nil, empty or filled slices. It knows kinds, not fields, so it
// reaches a field added to any of the types it is given; a kind it does
// not know fails the test, to be added here and to appendClusterSpec.
func fillRandom(t *testing.T, r *rand.Rand, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fillRandom(t, r, v.Field(i), path+"."+f.Name)
			}
		}
	case reflect.Pointer:
		if r.Intn(3) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fillRandom(t, r, v.Elem(), path)
	case reflect.Slice:
		switch n := r.Intn(5); n {
		case 0:
			v.SetZero()
		default:
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				fillRandom(t, r, v.Index(i), path+"[]")
			}
		}
	case reflect.String:
		if r.Intn(4) == 0 {
			v.SetString("")
			return
		}
		v.SetString(randomJSONString(r))
	case reflect.Bool:
		v.SetBool(r.Intn(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		lim := int64(1)<<(bits-1) - 1
		v.SetInt([]int64{0, 0, 1, -1, 80, 5e9, lim, -lim - 1, r.Int63() >> (64 - bits)}[r.Intn(9)])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits := v.Type().Bits()
		v.SetUint([]uint64{0, 0, 1, 100, 1<<bits - 1, r.Uint64() >> (64 - bits)}[r.Intn(6)])
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, math.Copysign(0, -1), 1, 0.5, -2.25, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789e30, 1e-300, math.MaxFloat64, r.NormFloat64() * 1e3}[r.Intn(14)])
	default:
		t.Fatalf("%s: fillRandom cannot fill a %s: teach it, and appendClusterSpec, this kind", path, v.Kind())
	}
}

// jsonClusterName is clusterName as it was when it called json.Marshal:
// the names it gives must not change.
func jsonClusterName(t *testing.T, spec ClusterSpec) string {
	t.Helper()
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(js)
	prefix := "empty"
	if len(spec.Backends) > 0 {
		b := spec.Backends[0]
		prefix = b.Service.Namespace + "/" + b.Service.Name + "/" + strconv.Itoa(int(b.Port))
		if n := len(spec.Backends); n > 1 {
			prefix += "+" + strconv.Itoa(n-1)
		}
	}
	if max := maxClusterNameLen - clusterHashLen - 1; len(prefix) > max {
		prefix = prefix[:max]
	}
	return prefix + "/" + hex.EncodeToString(sum[:])[:clusterHashLen]
}

// TestAppendClusterSpecEqualsJSON fills every field of ClusterSpec, and of
// every type it holds, with random values by reflection, and checks that
// appendClusterSpec writes what json.Marshal writes and that clusterName
// gives the name it gave with json.Marshal. The filler walks the types, not
// a list of fields: a field added to ClusterSpec or to a type within it
// that appendClusterSpec does not write makes this test fail.
func TestAppendClusterSpecEqualsJSON(t *testing.T) {
	r := rand.New(rand.NewSource(15))
	for i := range 20000 {
		var spec ClusterSpec
		fillRandom(t, r, reflect.ValueOf(&spec).Elem(), "ClusterSpec")
		want, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendClusterSpec(nil, &spec); !bytes.Equal(got, want) {
			t.Fatalf("spec %d: appendClusterSpec\n got %s\nwant %s", i, got, want)
		}
		if got, want := clusterName(spec), jsonClusterName(t, spec); got != want {
			t.Fatalf("spec %d: clusterName %q, with json.Marshal %q", i, got, want)
		}
	}
}

// TestClusterNameUnchanged holds the name of a realistic spec, which the
// random ones of TestAppendClusterSpecEqualsJSON rarely resemble, to the
// one json.Marshal gave it: the hash of the canonical spec is part of
// every cluster name Envoy has ever been sent (the goldens hold literal
// names).
func TestClusterNameUnchanged(t *testing.T) {
	if got, want := clusterName(benchClusterSpec()), jsonClusterName(t, benchClusterSpec()); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestClusterNameRejectsNaN: NaN has no JSON form; json.Marshal failed on
// it, and clusterName still panics rather than name a cluster after a
// spec it cannot write.
func TestClusterNameRejectsNaN(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("clusterName of a NaN aggression did not panic")
		}
	}()
	clusterName(ClusterSpec{SlowStart: &SlowStart{Aggression: math.NaN()}})
}
