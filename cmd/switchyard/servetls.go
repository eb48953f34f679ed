package main

import (
	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

// serve's xDS TLS flags; `switchyard bootstrap` takes the same three for
// the client side.
const (
	flagXDSTLSCert = "xds-tls-cert"
	flagXDSTLSKey  = "xds-tls-key"
	flagXDSTLSCA   = "xds-tls-ca"
	flagInsecure   = "insecure"
)

func init() {
	serveFlags = append(serveFlags, addServeTLSFlags)
	serveChecks = append(serveChecks, checkServeTLS)
}

func addServeTLSFlags(f *pflag.FlagSet, _ *server.Config) {
	f.String(flagXDSTLSCert, "", "PEM certificate the xDS server presents (see 'switchyard certgen'); with --xds-tls-key and --xds-tls-ca, clients must present a certificate signed by that CA")
	f.String(flagXDSTLSKey, "", "PEM private key of --xds-tls-cert")
	f.String(flagXDSTLSCA, "", "PEM CA bundle that must have signed every xDS client's certificate")
	f.Bool(flagInsecure, false, "serve xDS in clear text on a non-loopback --xds-address; xDS carries private keys, so only for networks nobody else can reach")
}

// checkServeTLS loads the TLS files into the server's options, and refuses
// clear text on an address other hosts can reach unless --insecure says
// so (then it warns).
func checkServeTLS(f *pflag.FlagSet, cfg *server.Config) error {
	var files xdstls.Files
	files.Cert, _ = f.GetString(flagXDSTLSCert)
	files.Key, _ = f.GetString(flagXDSTLSKey)
	files.CA, _ = f.GetString(flagXDSTLSCA)
	insecure, _ := f.GetBool(flagInsecure)
	if err := files.Check("--xds-tls-"); err != nil {
		return usageError("%v", err)
	}
	if files.Set() {
		creds, err := xdstls.ServerCredentials(files, cfg.Log)
		if err != nil {
			return usageError("xDS TLS: %v", err)
		}
		cfg.GRPCOptions = append(cfg.GRPCOptions, grpc.Creds(creds))
		// The client certificate bounds the groups a node may claim.
		cfg.XDSOptions = append(cfg.XDSOptions, xdscache.WithGroupAuthorizer(xdstls.AuthorizeGroup))
		return nil
	}
	if xdstls.IsLoopback(cfg.XDSAddress) {
		return nil
	}
	if !insecure {
		return usageError("--xds-address %s is reachable from other hosts and xDS carries private keys: give --xds-tls-cert, --xds-tls-key and --xds-tls-ca (see 'switchyard certgen'), or --insecure to serve in clear text anyway", cfg.XDSAddress)
	}
	cfg.Log.Warn("serving xDS in clear text on a non-loopback address (--insecure): anyone who can reach it can read every TLS private key served over SDS", "address", cfg.XDSAddress)
	return nil
}
