// Package objects holds the typed Kubernetes objects Switchyard reads, as a
// snapshot that sources fill and the DAG builder reads. Services and
// EndpointSlices, which a cluster has by the hundred thousand, are held in
// compact types of this package (Service, EndpointSlice) that keep only
// what a build reads.
//
// A Snapshot is changed only through Apply, by the one goroutine that also
// runs builds, so a build always sees a consistent set of objects without
// copying them. Keys name objects (including ones that do not exist yet),
// which lets the incremental builder record what each result read.
package objects

// MeshAnnotation, set to "true" on a Service or on its Namespace, puts the
// Service in the mesh: workloads reach it east-west through proxyless
// gRPC, DNS and the node proxies. A Service annotated "false" stays out of
// a mesh namespace. It lives here, beside the objects it marks, because
// the sources read it too (the Kubernetes source passes on only the Pods
// of mesh namespaces), and a source knows nothing of the DAG.
const MeshAnnotation = "switchyard.dev/mesh"
