package translator

import "google.golang.org/protobuf/proto"

// Exported for the golden tests, which live in package translator_test so
// that they can import internal/render without an import cycle.

// ValidateMessage runs ValidateAll on m and on every typed_config Any
// nested in it.
func ValidateMessage(m proto.Message) []error { return validateMessage(m) }

// GRPCProblems lists what grpc-go's xDS client would reject in r.
func GRPCProblems(r *Resources) []error { return grpcProblems(r) }
