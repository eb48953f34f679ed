package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestNoteClaimRule checks that render's YAML names its rule for host name
// conflicts on the line above the statuses, and still parses.
func TestNoteClaimRule(t *testing.T) {
	in := "resources:\n  x:\n  - statuses: nested\nstatuses:\n- name: a\n"
	var stderr bytes.Buffer
	out := string(noteClaimRule([]byte(in), "yaml", &stderr))
	want := "resources:\n  x:\n  - statuses: nested\n# " + claimRule + "\nstatuses:\n- name: a\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	var a, b any
	if err := yaml.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(in), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the note changed what the YAML says: %v, want %v", a, b)
	}
	if stderr.Len() != 0 {
		t.Errorf("YAML output also wrote %q to stderr", stderr.String())
	}
	if out := noteClaimRule([]byte("{}\n"), "json", &stderr); string(out) != "{}\n" || !strings.Contains(stderr.String(), claimRule) {
		t.Errorf("json: output %q, stderr %q", out, stderr.String())
	}
}
