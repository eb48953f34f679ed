package dirsource

import (
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// validateKey checks an object's name and namespace with the API server's
// own rules, and returns what is wrong or "". Names end up in cluster names,
// status and log lines, so a name a cluster would refuse is refused here.
func validateKey(k objects.Key, generateName string) string {
	if k.Name == "" {
		if generateName != "" {
			return "metadata.name is required (generateName needs an API server)"
		}
		return "metadata.name is required"
	}
	nameOK := isDNS1123Subdomain
	if k.Kind == objects.KindService {
		nameOK = isDNS1035Label
	}
	if errs := nameOK(k.Name); len(errs) > 0 {
		return fmt.Sprintf("metadata.name %q: %s", k.Name, strings.Join(errs, "; "))
	}
	if k.Kind.ClusterScoped() {
		return ""
	}
	// ValidateNamespaceName is a DNS-1123 label, which isDNS1123Label
	// checks faster.
	if errs := isDNS1123Label(k.Namespace); len(errs) > 0 {
		return fmt.Sprintf("metadata.namespace %q: %s", k.Namespace, strings.Join(errs, "; "))
	}
	return ""
}
