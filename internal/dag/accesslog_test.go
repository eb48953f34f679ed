package dag_test

import (
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

func TestValidateAccessLogFormat(t *testing.T) {
	for format, wantErr := range map[string]string{
		"plain text, no operators":                       "",
		"%START_TIME% %START_TIME(%s.%3f)% 100%%":        "",
		"%DOWNSTREAM_REMOTE_ADDRESS% -> %UPSTREAM_HOST%": "",
		"%REQ(:AUTHORITY):10% %FILTER_STATE(key)%":       "",
		"%UPSTREAM_HOSTNAME%":                            "at offset 0: %UPSTREAM_HOSTNAME% is not an operator Envoy knows",
		"ok %BYTES_SENT":                                 "at offset 3: %BYTES_SENT is not closed by %",
		"50% off":                                        "at offset 2: % starts no operator (write %% for a percent sign)",
		"%BYTES_SENT(x)%":                                "%BYTES_SENT% takes no argument",
		"%DYNAMIC_METADATA%":                             "%DYNAMIC_METADATA% needs an argument",
		"%REQ(host%":                                     "the argument has no closing parenthesis",
		"%REQ(host):x%":                                  "the length after ':' is not a number",
	} {
		err := dag.ValidateAccessLogFormat(format)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%q: %v", format, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%q: error %v, want one containing %q", format, err, wantErr)
		}
	}
}
