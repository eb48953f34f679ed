package incremental

import (
	"bytes"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestEncodingIsDeterministic encodes every resource of a random build
// again, several times: versions come from the bytes, so an encoder that
// writes map entries in random order (vtproto does, see xdsres.Marshal)
// would re-send unchanged resources and give a restarted control plane
// other versions. It matters under -tags vtprotobuf (make unit-vtproto).
func TestEncodingIsDeterministic(t *testing.T) {
	for seed := range int64(3) {
		set := testSet(t, seed)
		e := New(set.Snapshot(), Config{Translator: translator.DefaultOptions()})
		if _, err := e.Update(Changes{Objects: keysOfChanges(set.Changes())}); err != nil {
			t.Fatal(err)
		}
		for _, g := range xdsres.Groups {
			for typ, byName := range e.Targets(g) {
				for name, r := range byName.All() {
					m := r.Decoded()
					for range 5 {
						b, err := xdsres.Marshal(m)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(b, r.Any.GetValue()) {
							t.Errorf("seed %d: %s %s %s encodes differently from one time to the next", seed, g, xdsres.ShortType(typ), name)
							break
						}
					}
				}
			}
		}
	}
}
