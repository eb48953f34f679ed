package dirsource

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"

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
	nameOK := apivalidation.NameIsDNSSubdomain
	if k.Kind == objects.KindService {
		nameOK = apivalidation.NameIsDNS1035Label
	}
	if errs := nameOK(k.Name, false); len(errs) > 0 {
		return fmt.Sprintf("metadata.name %q: %s", k.Name, strings.Join(errs, "; "))
	}
	if k.Kind.ClusterScoped() {
		return ""
	}
	if errs := apivalidation.ValidateNamespaceName(k.Namespace, false); len(errs) > 0 {
		return fmt.Sprintf("metadata.namespace %q: %s", k.Namespace, strings.Join(errs, "; "))
	}
	return ""
}
