package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// clusterDetail is one cluster's load assignment as the cluster page
// shows it.
type clusterDetail struct {
	Name string `json:"name"`
	// Version is the load assignment's version, which changes with it.
	Version    string     `json:"version"`
	Localities []locality `json:"localities"`
	Healthy    int        `json:"healthy"`
	Total      int        `json:"total"`
}

// locality is one LocalityLbEndpoints: Service is the Kubernetes Service
// it holds (Switchyard puts it in sub_zone), Weight its share.
type locality struct {
	Zone      string     `json:"zone"`
	Service   string     `json:"service"`
	Weight    uint32     `json:"weight"`
	Priority  uint32     `json:"priority"`
	Endpoints []endpoint `json:"endpoints"`
}

type endpoint struct {
	Address string `json:"address"`
	Health  string `json:"health"`
	Weight  uint32 `json:"weight,omitempty"`
}

func describeCluster(r *xdsres.Resource) *clusterDetail {
	cla, _ := r.Decoded().(*envoy_config_endpoint_v3.ClusterLoadAssignment)
	out := &clusterDetail{Name: r.Name, Version: r.Version, Localities: []locality{}}
	for _, l := range cla.GetEndpoints() {
		loc := locality{Zone: l.GetLocality().GetZone(), Service: l.GetLocality().GetSubZone(), Weight: l.GetLoadBalancingWeight().GetValue(), Priority: l.GetPriority(), Endpoints: []endpoint{}}
		for _, e := range l.GetLbEndpoints() {
			sa := e.GetEndpoint().GetAddress().GetSocketAddress()
			ep := endpoint{Address: fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()), Health: e.GetHealthStatus().String(), Weight: e.GetLoadBalancingWeight().GetValue()}
			out.Total++
			if ep.Health == "HEALTHY" || ep.Health == "UNKNOWN" {
				out.Healthy++
			}
			loc.Endpoints = append(loc.Endpoints, ep)
		}
		out.Localities = append(out.Localities, loc)
	}
	return out
}

// serveCluster answers /api/cluster?name=.
func (c *console) serveCluster(w http.ResponseWriter, r *http.Request) {
	vs := c.viewsFor(w, r)
	if vs == nil {
		return
	}
	name := r.URL.Query().Get("name")
	res := vs.assignment(name)
	if res == nil {
		http.Error(w, "no load assignment named "+name+" is served", http.StatusNotFound)
		return
	}
	writeJSON(w, describeCluster(res))
}

// clusterPoll is how often the events stream looks for a new version of
// the endpoints. It only compares one version string unless something
// changed, and an endpoint change never waits behind a rebuild.
const clusterPoll = 200 * time.Millisecond

// serveClusterEvents answers /api/cluster/events?name= with server-sent
// events: the cluster's detail now, then again each time its load
// assignment changes, until the browser goes away.
func (c *console) serveClusterEvents(w http.ResponseWriter, r *http.Request) {
	vs := c.viewsFor(w, r)
	if vs == nil {
		return
	}
	name := r.URL.Query().Get("name")
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	tick := time.NewTicker(clusterPoll)
	defer tick.Stop()
	typeVersion, sent := "", "\x00"
	for {
		if v := vs.cache.Version(xdsres.GroupEnvoy, resource.EndpointType); v != typeVersion {
			typeVersion = v
			var detail *clusterDetail
			if res := vs.assignment(name); res != nil {
				detail = describeCluster(res)
			}
			version := ""
			if detail != nil {
				version = detail.Version
			}
			if version != sent {
				sent = version
				b, _ := json.Marshal(detail)
				if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
					return
				}
				flusher.Flush()
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
