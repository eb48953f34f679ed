package dag

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// StatusRange is a range of HTTP statuses, [Start, End).
type StatusRange struct {
	Start, End int64
}

// SlowStart ramps a new endpoint's traffic up over Window.
type SlowStart struct {
	Window time.Duration
	// Aggression is the ramp's exponent; 1 is linear.
	Aggression float64
	// MinWeightPercent is the share a new endpoint starts with.
	MinWeightPercent uint32
}

const (
	defaultSlowStartAggression = 1.0
	defaultSlowStartMinWeight  = 10
)

// expectedStatuses checks a health check's healthy statuses.
func expectedStatuses(rs []switchyardv1.HTTPStatusRange) ([]StatusRange, error) {
	var out []StatusRange
	for i, r := range rs {
		if r.Start < 100 || r.Start > 599 || r.End < 101 || r.End > 600 || r.Start >= r.End {
			return nil, fmt.Errorf("expectedStatuses[%d]: [%d, %d) is not a range of HTTP statuses (start 100-599, end 101-600, start below end)", i, r.Start, r.End)
		}
		out = append(out, StatusRange{Start: r.Start, End: r.End})
	}
	return out, nil
}

// slowStart checks a service's slowStartPolicy against the route's
// strategy: Envoy has slow start for round robin and least request only.
func slowStart(p *switchyardv1.SlowStartPolicy, lb string) (*SlowStart, error) {
	if p == nil {
		return nil, nil
	}
	if lb != "" && lb != LBRoundRobin && lb != LBWeightedLeastRequest {
		return nil, fmt.Errorf(": works with the RoundRobin and WeightedLeastRequest strategies only, not %s", lb)
	}
	w, err := parseDuration(p.Window)
	if err != nil || w == nil || *w <= 0 {
		return nil, fmt.Errorf(".window: %q is not a duration such as \"30s\"", p.Window)
	}
	ss := &SlowStart{Window: *w, Aggression: defaultSlowStartAggression, MinWeightPercent: defaultSlowStartMinWeight}
	if p.Aggression != "" {
		a, err := strconv.ParseFloat(p.Aggression, 64)
		if err != nil || a <= 0 || a > 1000 {
			return nil, fmt.Errorf(".aggression: %q is not a number above 0 (and at most 1000)", p.Aggression)
		}
		ss.Aggression = a
	}
	if m := p.MinimumWeightPercent; m != nil {
		if *m < 0 || *m > 100 {
			return nil, fmt.Errorf(".minWeightPercent: %d is not in 0-100", *m)
		}
		ss.MinWeightPercent = uint32(*m)
	}
	return ss, nil
}

func sameSlowStart(a, b *SlowStart) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// hasTCPPort reports whether the Service has the TCP port.
func hasTCPPort(svc *objects.Service, port int32) bool {
	for _, sp := range svc.Spec.Ports {
		if sp.Port == port && (sp.Protocol == "" || sp.Protocol == corev1.ProtocolTCP) {
			return true
		}
	}
	return false
}
