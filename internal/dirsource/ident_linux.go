package dirsource

import (
	"io/fs"
	"syscall"
	"time"
)

// statIdentity returns the inode, device and change time of a file, which
// fs.FileInfo does not carry portably.
func statIdentity(fi fs.FileInfo) (ino, dev uint64, ctime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, time.Time{}, false
	}
	return st.Ino, uint64(st.Dev), time.Unix(st.Ctim.Unix()), true //nolint:unconvert // Dev is narrower on some architectures
}
