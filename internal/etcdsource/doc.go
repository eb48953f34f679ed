// Package etcdsource reads Switchyard's input objects from an etcd v3
// cluster, for `switchyard serve --etcd-endpoints`, and writes their status
// back into it.
//
// One key holds one object, <prefix><kind>/<namespace>/<name> (key.go),
// its value a manifest decoded by the directory source's strict decoder
// (dirsource.Decode), so that etcd accepts exactly what a directory does.
// A value that does not load is a Problem named by its key; every other
// key still loads.
//
// A Source lists the prefix at one revision, then watches from the next;
// the client resumes a watch broken by a disconnect from the last revision
// delivered, a watch that ends is opened again from the last revision
// seen, and one that fell behind a compaction lists again and emits the
// difference (source.go). While etcd does not answer, the control plane
// keeps serving what it read, and ReadyDetail and the metrics say so
// (health.go).
//
// A StatusWriter writes status under <prefix>status/ while it holds an
// etcd lease won in an election, each write fenced by a check that it
// still does (status.go), so that replicas sharing a cluster take turns.
// ApplyFile and DeleteFile are `switchyard etcd apply` and `delete`: one
// transaction per manifest file (apply.go).
//
// site/etcd.md is the user's view of all this.
package etcdsource
