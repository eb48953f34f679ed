package dag

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/switchyard-dev/switchyard/internal/jsonquote"
)

// appendClusterSpec appends to b exactly the bytes json.Marshal(*s) gives:
// fields in declaration order, the `json:",omitempty"` ones left out when
// empty, nil pointers and nil slices as null, strings escaped as
// encoding/json escapes them. Cluster names hash these bytes, so they were
// fixed when the hash used json.Marshal; writing them by hand spares the
// reflection. TestAppendClusterSpecEqualsJSON holds the two equal for every
// field, a field added later included.
func appendClusterSpec(b []byte, s *ClusterSpec) []byte {
	b = append(b, `{"Backends":`...)
	if s.Backends == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONArray(b, s.Backends, appendBackend)
	}
	b = appendJSONField(b, "Protocol", s.Protocol)
	b = append(b, `,"UpstreamTLS":`...)
	b = appendUpstreamTLS(b, s.UpstreamTLS)
	b = appendJSONField(b, "LoadBalancer", s.LoadBalancer)
	b = append(b, `,"HealthCheck":`...)
	b = appendHealthCheck(b, s.HealthCheck)
	b = append(b, `,"IdleConnectionTimeout":`...)
	if d := s.IdleConnectionTimeout; d == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*d), 10)
	}
	b = append(b, `,"CircuitBreakers":`...)
	b = appendCircuitBreakers(b, s.CircuitBreakers)
	if s.SlowStart != nil {
		b = append(b, `,"SlowStart":`...)
		b = appendSlowStart(b, s.SlowStart)
	}
	if s.ClientCertificate != "" {
		b = appendJSONField(b, "ClientCertificate", s.ClientCertificate)
	}
	if s.SNI != "" {
		b = appendJSONField(b, "SNI", s.SNI)
	}
	return append(b, '}')
}

func appendBackend(b []byte, be *Backend) []byte {
	b = append(b, `{"Service":{"Namespace":`...)
	b = jsonquote.Append(b, be.Service.Namespace)
	b = appendJSONField(b, "Name", be.Service.Name)
	b = append(b, `},"Port":`...)
	b = strconv.AppendInt(b, int64(be.Port), 10)
	b = append(b, `,"Weight":`...)
	b = strconv.AppendUint(b, uint64(be.Weight), 10)
	b = append(b, `,"Priority":`...)
	b = strconv.AppendUint(b, uint64(be.Priority), 10)
	if be.HealthPort != 0 {
		b = append(b, `,"HealthPort":`...)
		b = strconv.AppendInt(b, int64(be.HealthPort), 10)
	}
	if be.ExternalName != "" {
		b = appendJSONField(b, "ExternalName", be.ExternalName)
	}
	return append(b, '}')
}

func appendUpstreamTLS(b []byte, t *UpstreamTLS) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"CASecret":`...)
	b = jsonquote.Append(b, t.CASecret)
	b = appendJSONField(b, "SubjectName", t.SubjectName)
	if len(t.SubjectNames) > 0 {
		b = append(b, `,"SubjectNames":`...)
		b = appendJSONArray(b, t.SubjectNames, func(b []byte, n *string) []byte { return jsonquote.Append(b, *n) })
	}
	return append(b, '}')
}

func appendHealthCheck(b []byte, h *HealthCheck) []byte {
	if h == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"Path":`...)
	b = jsonquote.Append(b, h.Path)
	b = appendJSONField(b, "Host", h.Host)
	b = appendDurationField(b, "Interval", h.Interval)
	b = appendDurationField(b, "Timeout", h.Timeout)
	b = appendUintField(b, "UnhealthyThreshold", h.UnhealthyThreshold)
	b = appendUintField(b, "HealthyThreshold", h.HealthyThreshold)
	if len(h.ExpectedStatuses) > 0 {
		b = append(b, `,"ExpectedStatuses":`...)
		b = appendJSONArray(b, h.ExpectedStatuses, appendStatusRange)
	}
	return append(b, '}')
}

func appendStatusRange(b []byte, r *StatusRange) []byte {
	b = append(b, `{"Start":`...)
	b = strconv.AppendInt(b, r.Start, 10)
	b = append(b, `,"End":`...)
	b = strconv.AppendInt(b, r.End, 10)
	return append(b, '}')
}

func appendCircuitBreakers(b []byte, c *CircuitBreakers) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"MaxConnections":`...)
	b = strconv.AppendUint(b, uint64(c.MaxConnections), 10)
	b = appendUintField(b, "MaxPendingRequests", c.MaxPendingRequests)
	b = appendUintField(b, "MaxRequests", c.MaxRequests)
	b = appendUintField(b, "MaxRetries", c.MaxRetries)
	b = append(b, `,"MaxRetriesSet":`...)
	b = strconv.AppendBool(b, c.MaxRetriesSet)
	if c.PerHostMaxConnections != 0 {
		b = appendUintField(b, "PerHostMaxConnections", c.PerHostMaxConnections)
	}
	return append(b, '}')
}

func appendSlowStart(b []byte, s *SlowStart) []byte {
	b = append(b, `{"Window":`...)
	b = strconv.AppendInt(b, int64(s.Window), 10)
	b = append(b, `,"Aggression":`...)
	b = appendJSONFloat(b, s.Aggression)
	b = appendUintField(b, "MinWeightPercent", s.MinWeightPercent)
	return append(b, '}')
}

// appendJSONArray appends the elements of a non-nil slice as a JSON array.
func appendJSONArray[T any](b []byte, xs []T, appendElem func([]byte, *T) []byte) []byte {
	b = append(b, '[')
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendElem(b, &xs[i])
	}
	return append(b, ']')
}

// appendKey appends `,"name":`, the key of a field that is not the first
// of its object.
func appendKey(b []byte, name string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func appendJSONField(b []byte, name, s string) []byte {
	return jsonquote.Append(appendKey(b, name), s)
}

func appendUintField(b []byte, name string, v uint32) []byte {
	return strconv.AppendUint(appendKey(b, name), uint64(v), 10)
}

func appendDurationField(b []byte, name string, d time.Duration) []byte {
	return strconv.AppendInt(appendKey(b, name), int64(d), 10)
}

// appendJSONFloat formats f as encoding/json does: like %g, but with the
// exponent form only below 1e-6 or from 1e21, and its exponent unpadded.
// NaN and infinities have no JSON form; json.Marshal failed on them, and
// clusterName panicked, as it still does (slowStart admits neither).
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		panic(fmt.Sprintf("dag: cannot encode ClusterSpec: SlowStart.Aggression is %v", f))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 is written e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
