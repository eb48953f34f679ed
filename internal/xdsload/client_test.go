package xdsload

import (
	"context"
	"testing"
	"time"
)

// TestStreamsSyncAndFollowChanges opens a few streams against a small
// control plane: each must receive every resource its listeners lead to,
// and then an endpoint change.
func TestStreamsSyncAndFollowChanges(t *testing.T) {
	s := serve(t, 40)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Config{Target: s.addr, Streams: 5, StreamsPerConn: 2, Listeners: s.listeners})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if _, err := c.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	for i, st := range c.Streams() {
		st.mu.Lock()
		n := len(st.want[typeListener]) + len(st.want[typeRoute]) + len(st.want[typeCluster]) + len(st.want[typeEndpoint])
		st.mu.Unlock()
		if n < 6 {
			t.Errorf("stream %d follows %d resources, want two hosts' listeners, routes, clusters and assignments", i, n)
		}
	}
	from := c.Versions(typeEndpoint, s.cla)
	for i, v := range from {
		if v == "" {
			t.Fatalf("stream %d does not hold %s", i, s.cla)
		}
	}
	s.flip(t, false)
	receipts, err := c.WaitChanged(ctx, typeEndpoint, s.cla, from)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range receipts {
		if r.Resources != 1 {
			t.Errorf("stream %d got %d resources for one endpoint change", i, r.Resources)
		}
	}
}
