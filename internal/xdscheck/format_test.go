package xdscheck_test

import (
	"testing"

	"github.com/switchyard-dev/switchyard/internal/xdscheck"
)

func TestFormatString(t *testing.T) {
	for _, ok := range []string{
		"", "plain", "50%%", "%%%%", "%HOSTNAME%", "%REQ(x-id)%", "%REQ(:authority)%",
		"%REQ(a?b):10%", "%START_TIME(%s)%", "a %PROTOCOL% b %%",
	} {
		if err := xdscheck.FormatString(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"50%", "%", "%%%", "%NOPE%", "%REQ(x%", "%HOSTNAME:x%", "%REQ(x):%", "%CONTOUR_NAMESPACE%",
	} {
		if err := xdscheck.FormatString(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
