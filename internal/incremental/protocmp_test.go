package incremental

import (
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

func protocmpTransform() cmp.Option { return protocmp.Transform() }
