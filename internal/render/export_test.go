package render

// ReferenceEncode and ReferenceJSON are the printers of reference_test.go,
// for the tests of package render_test, which read the golden cases.
var (
	ReferenceEncode = referenceEncode
	ReferenceJSON   = referenceJSON
)
