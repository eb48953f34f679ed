package dirsource

import (
	"hash/maphash"
	"io/fs"
	"time"
)

// racyMargin is how long after its last change a file's Stat is trusted to
// tell its content apart. A write that lands in the same timestamp tick as
// the Stat that preceded a read leaves size and times as they were, so a
// file changed that recently could differ from what was read with nothing
// in its Stat to show it: git calls such an index entry "racily clean".
// Two seconds cover the coarsest timestamps in use (FAT's) and clocks a
// little apart on network filesystems.
const racyMargin = 2 * time.Second

// identSeed keys the digests of identOf, so that no file can be made to
// collide with another's on purpose.
var identSeed = maphash.MakeSeed()

// identOf returns a digest of what Stat says about a file: its size, its
// modification and change times, and its inode and device. A rename over
// the file, a ConfigMap volume swapping its ..data link (Stat follows
// links: the target is another file), a write, a truncation, a chmod,
// even an mtime set back with touch change at least one of them (the
// change time cannot be set back).
//
// It returns 0, an identity never trusted, when the file changed less than
// racyMargin before at, a time taken before the Stat, and where the
// platform's Stat has no inode or change time.
func identOf(fi fs.FileInfo, at time.Time) uint64 {
	ino, dev, ctime, ok := statIdentity(fi)
	limit := at.Add(-racyMargin)
	mtime := fi.ModTime()
	if !ok || !mtime.Before(limit) || !ctime.Before(limit) {
		return 0
	}
	id := maphash.Comparable(identSeed, [5]int64{
		fi.Size(), mtime.UnixNano(), ctime.UnixNano(), int64(ino), int64(dev),
	})
	return max(id, 1) // 0 means untrusted
}
