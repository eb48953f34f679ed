package translator

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// CheckAssignmentEncoding compares what the engine serves for a cluster's
// load assignment, encoded straight from an Assignment, with the encoding
// of the messages the translator builds for it: Envoy's (LoadAssignment),
// gRPC's (GRPCLoadAssignment, whose duplicates are dropped from messages)
// and a DNS name's (LoadAssignmentAs). The assignment made in buf, which
// the caller reuses from one assignment to the next as the engine does,
// must encode the same. It is exported for the external tests, which read
// the golden inputs.
func CheckAssignmentEncoding(buf *AssignmentBuffers, name string, spec *dag.ClusterSpec, snap *objects.Snapshot, opts Options) error {
	a := AssignmentOf(spec, snap, opts)
	msg := LoadAssignment(name, spec, snap, opts)
	got, err := a.Encode(name)
	if err != nil {
		return fmt.Errorf("Encode(%q): %w", name, err)
	}
	reused, err := buf.Of(spec, snap, opts).Encode(name)
	if err != nil || !bytes.Equal(reused, got) {
		return fmt.Errorf("%s: the assignment made in reused buffers encodes differently (%v):\n got %x\nwant %x", name, err, reused, got)
	}
	if err := sameBytes("envoy", got, msg); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	grpc, err := a.GRPC().Encode(name)
	if err != nil {
		return fmt.Errorf("GRPC().Encode(%q): %w", name, err)
	}
	if err := sameBytes("grpc", grpc, GRPCLoadAssignment(name, spec, snap, opts)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if (a.GRPC() == a) != (GRPCLoadAssignmentOf(msg) == msg) {
		return fmt.Errorf("%s: GRPC shares the assignment: %t, GRPCLoadAssignmentOf shares the message: %t", name, a.GRPC() == a, GRPCLoadAssignmentOf(msg) == msg)
	}
	const dnsName = "api.example.com"
	renamed, err := RenameLoadAssignment(got, dnsName)
	if err != nil {
		return err
	}
	if err := sameBytes("dns", renamed, LoadAssignmentAs(msg, dnsName)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// sameBytes compares got with xdsres.Marshal(m), the encoding the engine
// served before it encoded load assignments itself.
func sameBytes(group string, got []byte, m proto.Message) error {
	want, err := xdsres.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: marshalling the message: %w", group, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s: direct encoding differs from the message's:\n got %x\nwant %x", group, got, want)
	}
	return nil
}
