package main

import (
	"bytes"
	"io"
)

// claimRule says how render settled competing claims on a host name. serve
// on a directory gives a host name to the proxy it saw first; render reads
// the directory once and cannot know that, so a newer file can win here
// that would lose in serve.
const claimRule = "host name conflicts: oldest creationTimestamp, then namespace/name (render has no history)"

// noteClaimRule puts claimRule on the line above the statuses of YAML
// output, as a comment so the output still parses. JSON has no comments:
// the note goes to stderr instead.
func noteClaimRule(out []byte, format string, stderr io.Writer) []byte {
	if format == "json" {
		_, _ = io.WriteString(stderr, claimRule+"\n") // a hint only: nothing to do if it fails
		return out
	}
	// Nested keys are indented, so at the start of a line "statuses:" is
	// the top-level key.
	i := bytes.Index(out, []byte("\nstatuses:"))
	if i < 0 {
		return out
	}
	var b bytes.Buffer
	b.Write(out[:i+1])
	b.WriteString("# " + claimRule + "\n")
	b.Write(out[i+1:])
	return b.Bytes()
}
