package incremental

import (
	"slices"
	"sort"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// claims are the names units compete for: host names, owned by the first
// root in claim order, and DNS names, owned by the first claim in
// Assemble's order (ExtensionServices by key, then roots in claim order,
// each root's names in its own order).
type claims struct {
	fqdn map[string][]*rootUnit
	dns  map[string][]*dnsClaim
	// warned lists, per DNS name, the owners warned that they lost it.
	warned map[string][]objects.Key
	// touched are the DNS names whose claims changed in this update.
	touched map[string]bool
}

// dnsClaim is one unit's claim on a DNS name.
type dnsClaim struct {
	name dag.DNSName
	// owner is the object warned when the claim loses.
	owner objects.Key
	// root is the claiming root's result, nil for an ExtensionService.
	root *dag.RootResult
	// index orders the claims of one root.
	index int
}

func newClaims() claims {
	return claims{
		fqdn:    map[string][]*rootUnit{},
		dns:     map[string][]*dnsClaim{},
		warned:  map[string][]objects.Key{},
		touched: map[string]bool{},
	}
}

// before orders DNS claims as Assemble makes them.
func (c *dnsClaim) before(o *dnsClaim) bool {
	switch {
	case c.root == nil && o.root == nil:
		return c.owner.Less(o.owner)
	case c.root == nil || o.root == nil:
		return c.root == nil
	case c.root != o.root:
		return dag.ClaimsBefore(c.root, o.root)
	}
	return c.index < o.index
}

// settleFQDNs moves the rebuilt roots to the claim lists of their new host
// names and returns the roots whose contribution must be redone: the
// rebuilt ones, and every root whose standing on a touched host name
// changed (it won or lost it, or lost it to another owner).
func (c *claims) settleFQDNs(rebuilt []*rootUnit) []*rootUnit {
	redo := make(map[*rootUnit]bool, len(rebuilt))
	touched := map[string]bool{}
	for _, r := range rebuilt {
		redo[r] = true
		if r.claimed {
			c.fqdn[r.claim] = removeFirst(c.fqdn[r.claim], r)
			if len(c.fqdn[r.claim]) == 0 {
				delete(c.fqdn, r.claim)
			}
			touched[r.claim] = true
			r.claimed = false
		}
		if r.res != nil && r.res.FQDN != "" {
			list := c.fqdn[r.res.FQDN]
			i := sort.Search(len(list), func(i int) bool { return dag.ClaimsBefore(r.res, list[i].res) })
			c.fqdn[r.res.FQDN] = insertAt(list, i, r)
			r.claim, r.claimed = r.res.FQDN, true
			touched[r.claim] = true
		}
	}
	for fqdn := range touched {
		list := c.fqdn[fqdn]
		for i, r := range list {
			if a := r.added; a == nil || a.winner != (i == 0) || (i > 0 && a.owner != list[0].nn) {
				redo[r] = true
			}
		}
	}
	out := make([]*rootUnit, 0, len(redo))
	for r := range redo {
		out = append(out, r)
	}
	return out
}

// standing returns whether r owns its host name and, when it does not,
// which root does.
func (c *claims) standing(r *rootUnit) (bool, *rootUnit) {
	if !r.claimed {
		return true, nil
	}
	list := c.fqdn[r.claim]
	return list[0] == r, list[0]
}

func (c *claims) addDNS(cl *dnsClaim) {
	list := c.dns[cl.name.Name]
	i := sort.Search(len(list), func(i int) bool { return cl.before(list[i]) })
	c.dns[cl.name.Name] = insertAt(list, i, cl)
	c.touched[cl.name.Name] = true
}

func (c *claims) removeDNS(cl *dnsClaim) {
	name := cl.name.Name
	list := removeFirst(c.dns[name], cl)
	if len(list) == 0 {
		delete(c.dns, name)
	} else {
		c.dns[name] = list
	}
	c.touched[name] = true
}

// removeFirst removes the first element equal to v, keeping the order of
// the others, and returns the list (unchanged when v is not in it).
func removeFirst[T comparable](list []T, v T) []T {
	if i := slices.Index(list, v); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

func insertAt[T any](list []T, i int, v T) []T {
	list = append(list, v)
	copy(list[i+1:], list[i:])
	list[i] = v
	return list
}
