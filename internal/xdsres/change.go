package xdsres

// Change replaces one resource, or deletes it when Resource is nil.
type Change struct {
	TypeURL  string
	Name     string
	Resource *Resource
}
