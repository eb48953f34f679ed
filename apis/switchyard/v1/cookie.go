package v1

// CookieRewritePolicy rewrites the attributes of one cookie in the
// Set-Cookie headers of responses, as Contour's field of the same name.
type CookieRewritePolicy struct {
	// Name of the cookie whose attributes are rewritten.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^[^()<>@,;:\\"\/[\]?={} \t\x7f\x00-\x1f]+$`
	Name string `json:"name"`

	// PathRewrite sets the Path attribute; unset leaves it.
	// +optional
	PathRewrite *CookiePathRewrite `json:"pathRewrite,omitempty"`

	// DomainRewrite sets the Domain attribute; unset leaves it.
	// +optional
	DomainRewrite *CookieDomainRewrite `json:"domainRewrite,omitempty"`

	// Secure adds (true) or removes (false) the Secure attribute; unset
	// leaves it.
	// +optional
	Secure *bool `json:"secure,omitempty"`

	// SameSite sets the SameSite attribute; unset leaves it.
	// +optional
	// +kubebuilder:validation:Enum=Strict;Lax;None
	SameSite *string `json:"sameSite,omitempty"`
}

// CookiePathRewrite is the new Path of a cookie.
type CookiePathRewrite struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^[ -:<-~]+$`
	Value string `json:"value"`
}

// CookieDomainRewrite is the new Domain of a cookie.
type CookieDomainRewrite struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Value string `json:"value"`
}
