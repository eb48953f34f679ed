package main

import "testing"

// TestOutputFlag: every command that prints data takes -o/--output. The
// others are listed with the reason they do not.
func TestOutputFlag(t *testing.T) {
	without := map[string]string{
		"serve":      "serves; prints only logs",
		"gen":        "writes manifests to --out; prints one line of progress to standard error",
		"bootstrap":  "writes its file to --out and names the format --format json|yaml",
		"xdsload":    "a load client; prints one line of latencies",
		"etcd":       "apply and delete write to etcd; they print one line of progress per file or key",
		"convert":    "writes manifests, in the YAML its input is in, to standard output or --output-dir",
		"help":       "cobra's",
		"completion": "cobra's",
	}
	checked := map[string]bool{}
	for _, c := range newRootCommand().Commands() {
		name := c.Name()
		if _, ok := without[name]; ok {
			continue
		}
		checked[name] = true
		f := c.Flags().Lookup("output")
		if f == nil || f.Shorthand != "o" {
			t.Errorf("%s prints data but has no -o/--output", name)
		}
	}
	for _, name := range []string{"render", "explain", "version", "certgen"} {
		if !checked[name] {
			t.Errorf("%s was not checked: is it still a command?", name)
		}
	}
}
