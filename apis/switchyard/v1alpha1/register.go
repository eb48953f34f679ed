package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// SchemeGroupVersion identifies this package's types to Kubernetes clients.
var SchemeGroupVersion = schema.GroupVersion{Group: switchyardv1.GroupName, Version: "v1alpha1"}

var (
	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds ExtensionService to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &ExtensionService{}, &ExtensionServiceList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
