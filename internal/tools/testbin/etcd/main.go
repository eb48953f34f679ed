// Command etcd is a thin wrapper around the upstream etcd server
// (go.etcd.io/etcd/server/v3/etcdmain), equivalent to etcd's own main.go. It
// exists only so that internal/tools/testbin/build.sh can build a real etcd from
// Go modules for envtest-based integration tests.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
