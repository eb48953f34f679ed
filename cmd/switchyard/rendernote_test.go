package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/switchyard-dev/switchyard/internal/render"
)

// TestClaimNote checks that render's YAML names its rule for host name
// conflicts on the line above the statuses, and still parses, and that
// JSON output leaves it to stderr.
func TestClaimNote(t *testing.T) {
	var stderr bytes.Buffer
	out := &render.Output{}
	var plain, noted bytes.Buffer
	if err := out.EncodeTo(&plain, "yaml", render.EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := out.EncodeTo(&noted, "yaml", render.EncodeOptions{StatusesNote: claimNote("yaml", &stderr)}); err != nil {
		t.Fatal(err)
	}
	if want := "resources: {}\n# " + claimRule + "\nstatuses: []\n"; noted.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", noted.String(), want)
	}
	var a, b any
	if err := yaml.Unmarshal(noted.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(plain.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the note changed what the YAML says: %v, want %v", a, b)
	}
	if stderr.Len() != 0 {
		t.Errorf("YAML output also wrote %q to stderr", stderr.String())
	}
	if note := claimNote("json", &stderr); note != "" || !strings.Contains(stderr.String(), claimRule) {
		t.Errorf("json: note %q, stderr %q", note, stderr.String())
	}
}
