package etcdsource

import (
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// keyRange is the etcd key range [from, end).
type keyRange struct{ from, end string }

// objectRanges are the ranges of the prefix that hold objects: the
// prefix without the directories Switchyard writes itself. Status writes
// go on all the time (one key per object whose status changes) and
// election keys with each campaign; watching the whole prefix would send
// every one of them to every replica, only to be dropped there.
//
// Kind segments are lower-case kind names followed by "/" (key.go), so no
// object key starts with "status/" or "leader/"; each directory d is cut
// out as [prefix+d, prefix+d without its "/" + "0"), "0" being the byte
// after "/".
func objectRanges(prefix string) []keyRange {
	own := []string{statusDir, leaderDir}
	slices.Sort(own)
	var out []keyRange
	from := prefix
	for _, d := range own {
		out = append(out, keyRange{from, prefix + d})
		from = prefix + d[:len(d)-1] + "0"
	}
	return append(out, keyRange{from, clientv3.GetPrefixRangeEnd(prefix)})
}
