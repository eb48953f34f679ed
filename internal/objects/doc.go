// Package objects holds the typed Kubernetes objects Switchyard reads, as a
// snapshot that sources fill and the DAG builder reads.
//
// A Snapshot is changed only through Apply, by the one goroutine that also
// runs builds, so a build always sees a consistent set of objects without
// copying them. Keys name objects (including ones that do not exist yet),
// which lets the incremental builder record what each result read.
package objects
