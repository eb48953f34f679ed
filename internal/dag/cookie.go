package dag

import (
	"fmt"
	"strings"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// CookieRewrite rewrites the attributes of one cookie in Set-Cookie
// response headers. A nil or empty field leaves that attribute alone.
type CookieRewrite struct {
	Name     string
	Path     *string
	Domain   *string
	Secure   *bool
	SameSite string
}

// parseCookieRewrites validates cookie rewrite policies. Values reach a
// generated Lua script as string literals, so they are limited to
// printable ASCII, which quotes the same way in Go and Lua.
func parseCookieRewrites(ps []switchyardv1.CookieRewritePolicy) ([]CookieRewrite, error) {
	var out []CookieRewrite
	seen := map[string]int{}
	for i, p := range ps {
		if err := validateCookieName(p.Name); err != nil {
			return nil, fmt.Errorf("[%d].name: %v", i, err)
		}
		if prev, dup := seen[p.Name]; dup {
			return nil, fmt.Errorf("[%d].name: cookie %q is already rewritten by [%d]", i, p.Name, prev)
		}
		seen[p.Name] = i
		cr := CookieRewrite{Name: p.Name, Secure: p.Secure}
		if p.PathRewrite != nil {
			v := p.PathRewrite.Value
			if v == "" || len(v) > 4096 || strings.ContainsRune(v, ';') || !printableASCII(v) {
				return nil, fmt.Errorf("[%d].pathRewrite.value: %q must be 1-4096 printable ASCII characters without \";\"", i, v)
			}
			cr.Path = &v
		}
		if p.DomainRewrite != nil {
			v := p.DomainRewrite.Value
			if err := validateFQDN(v); err != nil {
				return nil, fmt.Errorf("[%d].domainRewrite.value: %v", i, err)
			}
			cr.Domain = &v
		}
		if p.SameSite != nil {
			switch *p.SameSite {
			case "Strict", "Lax", "None":
				cr.SameSite = *p.SameSite
			default:
				return nil, fmt.Errorf("[%d].sameSite: %q is not one of Strict, Lax, None", i, *p.SameSite)
			}
		}
		if cr.Path == nil && cr.Domain == nil && cr.Secure == nil && cr.SameSite == "" {
			return nil, fmt.Errorf("[%d]: rewrites nothing: set pathRewrite, domainRewrite, secure or sameSite", i)
		}
		out = append(out, cr)
	}
	return out, nil
}

// validateCookieName checks an RFC 6265 cookie name (a token).
func validateCookieName(name string) error {
	if name == "" || len(name) > 4096 {
		return fmt.Errorf("must be 1-4096 characters")
	}
	for _, r := range name {
		if !isTokenChar(r) {
			return fmt.Errorf("%q contains %q, which a cookie name cannot", name, r)
		}
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
