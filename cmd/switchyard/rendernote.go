package main

import (
	"io"
)

// claimRule says how render settled competing claims on a host name. serve
// on a directory gives a host name to the proxy it saw first; render reads
// the directory once and cannot know that, so a newer file can win here
// that would lose in serve.
const claimRule = "host name conflicts: oldest creationTimestamp, then namespace/name (render has no history)"

// claimNote returns claimRule for YAML output, which prints it as a
// comment on the line above the statuses, so the output still parses.
// JSON has no comments: the note goes to stderr instead.
func claimNote(format string, stderr io.Writer) string {
	if format == "json" {
		_, _ = io.WriteString(stderr, claimRule+"\n") // a hint only: nothing to do if it fails
		return ""
	}
	return claimRule
}
