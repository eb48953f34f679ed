package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestLogFormat: --log-format json writes one JSON object per line, text
// key=value pairs, and anything else is a usage error naming both.
func TestLogFormat(t *testing.T) {
	var b bytes.Buffer
	log, err := newLogger(&b, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("full build", "objects", 3)
	var line map[string]any
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatalf("json log line %q: %v", b.String(), err)
	}
	if line["msg"] != "full build" || line["objects"] != float64(3) {
		t.Errorf("json log line = %v", line)
	}
	b.Reset()
	if log, err = newLogger(&b, "info", "text"); err != nil {
		t.Fatal(err)
	}
	log.Info("full build", "objects", 3)
	if !strings.Contains(b.String(), `msg="full build" objects=3`) {
		t.Errorf("text log line = %q", b.String())
	}
	if _, err := newLogger(&b, "info", "xml"); err == nil || !strings.Contains(err.Error(), "use text or json") {
		t.Errorf("--log-format xml: error %v, want one naming text and json", err)
	}
}
