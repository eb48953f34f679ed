package admin

import (
	"net/http"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// gatewayView is what one gateway serves (site/gateways.md). Every
// endpoint that shows configuration answers for one gateway at a time,
// chosen with ?gateway=NAME; without it, the default gateway.
type gatewayView struct {
	cache *xdscache.Cache
	// state is nil before the first build.
	state *State
}

// gateway resolves a request's ?gateway=, answering 400 with the
// gateways served when it names another.
func (cfg Config) gateway(w http.ResponseWriter, r *http.Request) (gatewayView, bool) {
	v, err := cfg.gatewayNamed(r.URL.Query().Get("gateway"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return v, false
	}
	return v, true
}

func (cfg Config) gatewayNamed(name string) (gatewayView, error) {
	c, err := cfg.Cache.LookupGateway(name)
	if err != nil {
		return gatewayView{}, err
	}
	st := cfg.State()
	if st != nil && c != cfg.Cache {
		st = st.Gateways[name]
	}
	return gatewayView{cache: c, state: st}, nil
}

func (v gatewayView) dag() *dag.DAG {
	if v.state == nil {
		return nil
	}
	return v.state.DAG
}

func (v gatewayView) statuses() []*dag.Status {
	if v.state == nil {
		return nil
	}
	return v.state.Statuses
}
