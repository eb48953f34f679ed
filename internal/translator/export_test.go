package translator

// Exported for the golden tests, which live in package translator_test so
// that they can import internal/render without an import cycle.

// GRPCProblems lists what grpc-go's xDS client would reject in r.
func GRPCProblems(r *Resources) []error { return grpcProblems(r) }

// The filters constFilter packs and toAny, for TestConstFilters.
var (
	RouterFilter         = routerFilter
	RBACFilter           = rbacFilter
	CORSFilter           = corsFilter
	LocalRateLimitFilter = localRateLimitFilter
	HTTPFilter           = httpFilter
	StdoutAccessLog      = stdoutAccessLog
	ToAny                = toAny
	LocalRateLimitPrefix = localRateLimitStatPrefix
)
