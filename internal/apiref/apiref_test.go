package apiref

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCurrent fails when site/reference/api.md is not what the API types
// say, as check-generated does for the CRDs.
func TestCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, Page))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale: run 'make apidocs' and commit the result (-want +got):\n%s", Page, diff)
	}
}

func TestRender(t *testing.T) {
	b, err := Generate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		"## example.dev/v1\n\nPackage v1 is a fixture.\n",
		"### Widget\n\n`apiVersion: example.dev/v1`, `kind: Widget`\n\nWidget is a kind.\n",
		"- **`metadata`** ([metav1.ObjectMeta](https://pkg.go.dev/k8s.io/apimachinery/pkg/apis/meta/v1#ObjectMeta), optional)\n",
		"- **`spec`** ([WidgetSpec](#widgetspec), required)\n",
		"Rules the API server checks:\n\n- a is \"required\" here\n",
		"- **`name`** (string, required): Name is &lt;name>.&lt;namespace>.\n\n    *Validation:* at least 1 character; at most 63 characters.\n",
		"- **`timeout`** (string, optional): *Validation:* a duration such as `300ms`, `1m30s` or `infinity`.\n",
		"- **`colors`** (list of [Color](#color), optional): Colors is a list. Second paragraph.\n\n    *Validation:* at most 3 items.\n",
		"### Color\n\nColor is a string type.\n\nA string. *Validation:* one of `red`, `blue`.\n",
		"- the fields of [WidgetSpec](#widgetspec), inline\n- **`count`** (integer, optional)\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "WidgetList") || strings.Contains(page, "TypeMeta") {
		t.Errorf("the page documents a List type or TypeMeta:\n%s", page)
	}
	order := []string{"### Widget\n", "### WidgetSpec", "### Color", "### Unused", "## example.dev/v2", "### Gadget"}
	last := -1
	for _, h := range order {
		i := strings.Index(page, h)
		if i < last {
			t.Errorf("%q comes before %q; want the order %q", h, order[0], order)
		}
		last = i
	}
}
