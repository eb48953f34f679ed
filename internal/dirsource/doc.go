// Package dirsource reads Switchyard's input objects from a directory of
// YAML manifests instead of a Kubernetes cluster, for `switchyard render`
// and `switchyard serve --source DIR`.
//
// Load reads a tree once into an objects.Snapshot. A Watcher reads it once
// and then follows it with fsnotify, re-reading only the files that changed
// and emitting the object-level difference as objects.Changes.
//
// The directory is treated like an API server that validates strictly: a
// document that is not valid YAML, names an unknown field, has a field of
// the wrong type, or holds an object a kube-apiserver would refuse (an
// EndpointSlice address that is not of its addressType, a port outside
// 1-65535, a kubernetes.io/tls Secret without tls.key, a name that is not a
// DNS subdomain) is left out and reported as a Problem with its file and
// line, and every other object still loads. Kinds Switchyard does not read
// (a Deployment, a ConfigMap) are reported as warnings and skipped, so a
// directory shared with other tools works.
//
// When two documents define the same object, the first in path order (paths
// compared component by component, as a directory walk visits them) and then
// in document order wins; the later one is reported. This rule does not
// depend on the order in which files were read, so Load and a Watcher that
// saw the same files in any order agree.
//
// A Watcher stamps every object with the time it first saw it as its
// creationTimestamp, replacing any the file sets, as an API server does on
// create: host names go to the oldest claim, and in `serve` the oldest claim
// is the one seen first, so a file added later cannot take a host name over.
// Load, for `render`, has no history and leaves creationTimestamp as the
// file sets it.
//
// Objects handed out by this package (in a Snapshot or in Changes) are never
// modified afterwards and must not be modified by the receiver.
package dirsource
