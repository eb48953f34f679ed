package k8ssource

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
)

// Scheme knows the Kubernetes types and Switchyard's API types.
var Scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(switchyardv1.AddToScheme(s))
	utilruntime.Must(switchyardv1alpha1.AddToScheme(s))
	utilruntime.Must(splitv1alpha4.AddToScheme(s))
	utilruntime.Must(specsv1alpha4.AddToScheme(s))
	utilruntime.Must(accessv1alpha3.AddToScheme(s))
	return s
}

// crdGroups are the groups served from CRDs, which speak JSON only.
var crdGroups = map[string]bool{
	switchyardv1.GroupName: true, splitv1alpha4.GroupName: true, specsv1alpha4.GroupName: true, accessv1alpha3.GroupName: true,
}

// RESTClient returns a client for one API group version whose requests
// and responses are typed with Scheme. There is no generated clientset for
// Switchyard's types; this is all the informers and the status writer
// need. Built-in groups talk protobuf, Switchyard's JSON.
func RESTClient(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = serializer.NewCodecFactory(Scheme).WithoutConversion()
	if !crdGroups[gv.Group] {
		c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		c.ContentType = runtime.ContentTypeProtobuf
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}
