//go:build !linux

package dirsource

import (
	"io/fs"
	"time"
)

// statIdentity reports that this platform's Stat is not read for an inode
// and a change time: without them a rewrite with its mtime set back would
// go unseen, so every rescan reads every file, as it did before identities.
func statIdentity(fs.FileInfo) (ino, dev uint64, ctime time.Time, ok bool) {
	return 0, 0, time.Time{}, false
}
