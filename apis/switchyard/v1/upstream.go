package v1

// HTTPStatusRange is a range of HTTP statuses, [start, end).
//
// +kubebuilder:validation:XValidation:rule="self.start < self.end",message="start must be below end"
type HTTPStatusRange struct {
	// Start, inclusive.
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=599
	Start int64 `json:"start"`
	// End, exclusive.
	// +kubebuilder:validation:Minimum=101
	// +kubebuilder:validation:Maximum=600
	End int64 `json:"end"`
}

// SlowStartPolicy ramps the traffic of a new endpoint up over a window
// instead of giving it its full share at once, as Contour's field of the
// same name. It works with the RoundRobin and WeightedLeastRequest
// strategies.
type SlowStartPolicy struct {
	// Window is how long the ramp lasts, a duration such as "30s".
	// +kubebuilder:validation:Pattern=`^(((\d*(\.\d*)?h)|(\d*(\.\d*)?m)|(\d*(\.\d*)?s)|(\d*(\.\d*)?ms)|(\d*(\.\d*)?us)|(\d*(\.\d*)?µs)|(\d*(\.\d*)?ns))+)$`
	Window string `json:"window"`

	// Aggression shapes the ramp: 1.0 (default) is linear, higher values
	// ramp up faster at first.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9]+([.][0-9]+)?|[.][0-9]+)$`
	Aggression string `json:"aggression,omitempty"`

	// MinimumWeightPercent is the share a new endpoint starts with;
	// default 10.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	MinimumWeightPercent *int32 `json:"minWeightPercent,omitempty"`
}
