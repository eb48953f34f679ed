package etcdsource

import (
	"context"
	"errors"
	"testing"
	"time"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

func proxyStatus(name, state string) *dag.Status {
	return &dag.Status{Key: objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: name}, State: state, Description: state + " HTTPProxy"}
}

// TestStatusWriterSweeps makes a newly elected writer converge the status
// keys on what the builds concluded: a stale key goes, a key that already
// holds the right bytes is not written again, a missing one is written;
// after that, only what a build changes is written.
func TestStatusWriterSweeps(t *testing.T) {
	e := etcdtest.Start(t)
	c := e.Client(t)
	ctx := context.Background()
	same, fresh, gone := proxyStatus("same", switchyardv1.StatusValid), proxyStatus("fresh", switchyardv1.StatusValid), proxyStatus("gone", switchyardv1.StatusValid)
	for _, st := range []*dag.Status{same, gone} {
		if _, err := c.Put(ctx, StatusKey(DefaultPrefix, st.Key), string(encodeStatus(st))); err != nil {
			t.Fatal(err)
		}
	}
	w := NewStatusWriter(StatusConfig{Client: c, Identity: "test", LeaseTTL: 2})
	w.Apply(dag.StatusUpdate{All: true, Changed: []*dag.Status{same, fresh}})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("status writer: %v", err)
		}
	}()

	value := func(st *dag.Status) string {
		resp, err := c.Get(ctx, StatusKey(DefaultPrefix, st.Key))
		if err != nil || len(resp.Kvs) == 0 {
			return ""
		}
		return string(resp.Kvs[0].Value)
	}
	// The counter moves after the transaction returns, so a reader can see
	// etcd's keys change first: wait for both.
	testenv.WaitFor(t, 10*time.Second, "the sweep", func() bool { return value(fresh) != "" && value(gone) == "" && w.Writes() >= 2 })
	if value(same) != string(encodeStatus(same)) || w.Writes() != 2 {
		t.Errorf("after the sweep: %d writes, want 2 (fresh written, gone deleted, same left alone)", w.Writes())
	}

	invalid := proxyStatus("fresh", switchyardv1.StatusInvalid)
	w.Apply(dag.StatusUpdate{Changed: []*dag.Status{invalid}, Removed: []objects.Key{same.Key}})
	testenv.WaitFor(t, 10*time.Second, "the update", func() bool {
		return value(fresh) == string(encodeStatus(invalid)) && value(same) == "" && w.Writes() >= 4
	})
	if w.Writes() != 4 {
		t.Errorf("%d writes, want 4: the update wrote one key and deleted one", w.Writes())
	}
}
